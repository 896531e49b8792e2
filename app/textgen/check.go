package textgen

import (
	"context"
	"fmt"
	"image"
	"regexp"
	"strconv"
	"strings"

	"easel/engine/qwen3vl"
)

// Verdict is Check's answer for one element of the prompt.
type Verdict struct {
	Element string `json:"element"`
	// Present is true for ✓, false for ✗; Answered is false when the model gave no yes or no.
	Present  bool `json:"present"`
	Answered bool `json:"answered"`
}

// Mark is the verdict as the front ends show it: ✓, ✗ or ?.
func (v Verdict) Mark() string {
	switch {
	case !v.Answered:
		return "?"
	case v.Present:
		return "✓"
	}
	return "✗"
}

// maxElements bounds how many elements one Check asks about.
const maxElements = 8

var (
	quoted   = regexp.MustCompile(`"([^"]+)"|“([^”]+)”`)
	splitter = regexp.MustCompile(`(?i)[,;.\n]+|\s+and\s+|\s+with\s+`)
)

// Elements are the things a prompt names, in order: each quoted text to render (as `the text
// "…"`), then the prompt's comma-, "and"- and "with"-separated phrases, at most eight, each
// once.
func Elements(prompt string) []string {
	var out []string
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s == "" || len(out) == maxElements {
			return
		}
		for _, o := range out {
			if strings.EqualFold(o, s) {
				return
			}
		}
		out = append(out, s)
	}
	for _, m := range quoted.FindAllStringSubmatch(prompt, -1) {
		add(`the text "` + m[1] + m[2] + `"`)
	}
	rest := quoted.ReplaceAllString(prompt, " ")
	for _, part := range splitter.Split(rest, -1) {
		if len(strings.Fields(part)) > 0 && len(part) <= 80 {
			add(part)
		}
	}
	return out
}

// checkQuestion asks about every element at once, one numbered answer per line.
func checkQuestion(elements []string) string {
	var b strings.Builder
	b.WriteString("For each numbered item, say whether it is visible in this image. Answer with one line per item: its number, then yes or no.\n")
	for i, e := range elements {
		fmt.Fprintf(&b, "%d. %s\n", i+1, e)
	}
	return strings.TrimRight(b.String(), "\n")
}

var answerLine = regexp.MustCompile(`(?im)^\W*(\d+)\W+(yes|no)\b`)

// parseAnswers reads "N. yes/no" lines into the verdicts.
func parseAnswers(text string, elements []string) []Verdict {
	out := make([]Verdict, len(elements))
	for i, e := range elements {
		out[i].Element = e
	}
	for _, m := range answerLine.FindAllStringSubmatch(text, -1) {
		n, err := strconv.Atoi(m[1])
		if err != nil || n < 1 || n > len(out) || out[n-1].Answered {
			continue
		}
		out[n-1].Answered, out[n-1].Present = true, strings.EqualFold(m[2], "yes")
	}
	return out
}

// Check asks whether each element of prompt is in img. The result's text is the model's raw
// answer.
func (w *Writer) Check(ctx context.Context, img *image.NRGBA, prompt string, o Options) ([]Verdict, *Result, error) {
	elements := Elements(prompt)
	if len(elements) == 0 {
		return nil, nil, fmt.Errorf("the prompt names nothing to check: write what the image should show")
	}
	in, err := w.VisionInput(img)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrBadImage, err)
	}
	pads := in.Grid[0] * in.Grid[1] * in.Grid[2] / (w.proc.MergeSize * w.proc.MergeSize)
	if o.MaxTokens <= 0 {
		o.MaxTokens = 8 * len(elements)
	}
	r, err := w.write(ctx, chatText("", checkQuestion(elements), pads), []qwen3vl.VisionInput{in}, o, 0, nil)
	if err != nil {
		return nil, nil, err
	}
	return parseAnswers(r.Text, elements), r, nil
}
