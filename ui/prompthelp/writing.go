package prompthelp

import (
	"context"
	"fmt"
	"image"
	"math"
	"strings"

	"easel/app/memplan"
	"easel/app/textgen"
	"easel/engine/qwen3vl"
)

// setStatus says what the writing did or does (and shows the line).
func (h *Panel) setStatus(text string) {
	h.Status.SetText(text)
	h.Status.Show()
}

// busy shows the controls of a running writing.
func (h *Panel) busy(on bool, what string) {
	if on {
		h.Expand.Disable()
		h.Describe.Disable()
		h.CheckNow.Disable()
		h.Stop.Show()
		h.setStatus(what)
		return
	}
	h.Expand.Enable()
	h.Describe.Enable()
	h.CheckNow.Enable()
	h.Stop.Hide()
	h.cancel = nil
}

// plan is the memory a writing needs (memplan.PredictWriting on the model's geometry): the status
// line says it, and a writing that does not fit the budget is refused before it starts.
func (h *Panel) plan(promptBytes int, img *image.NRGBA) memplan.WritingPrediction {
	p := memplan.WritingPlan{PromptTokens: 60 + promptBytes/4, MaxTokens: 300}
	if img != nil {
		// The image as Describe prepares it: at most a megapixel, a patch per 16×16 pixels and a
		// token per 2×2 patches.
		w, hgt := float64(img.Rect.Dx()), float64(img.Rect.Dy())
		scale := math.Min(1, math.Sqrt(float64(1<<20)/(w*hgt)))
		grid := [3]int{1, max(2, int(hgt*scale)/16), max(2, int(w*scale)/16)}
		p.Image, p.PromptTokens = &grid, p.PromptTokens+grid[1]*grid[2]/4
	}
	g, budget := h.host.Memory()
	return memplan.PredictWriting(g, p, budget)
}

// writer is one use of the model's writer: Expand, Describe or Check.
type writer func(ctx context.Context, w *textgen.Writer, o textgen.Options) (*textgen.Result, error)

// write runs one use off the UI goroutine, streaming its text into the suggestion.
func (h *Panel) write(what string, need memplan.WritingPrediction, run writer, done func(*textgen.Result)) {
	if h.cancel != nil {
		if what == "Check" {
			h.waiting = append(h.waiting, func() { h.write(what, need, run, done) })
		} else {
			h.say("%s waits for the writing under way: let it finish, or Stop it, then ask again.", what)
		}
		return
	}
	if !need.Fits {
		h.say("%s needs about %s of memory while writing (the text encoder, its language head and cache), more than this machine's budget allows: close other apps, or use a smaller model file.", what, memplan.GB(need.Peak))
		h.SuggestionBox.Hide()
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.busy(true, fmt.Sprintf("%s… (about %s in memory while writing)", what, memplan.GB(need.Peak)))
	if h.m.Current() == 0 && h.host.ShowWriting != nil { // a running job's panel shows its own ledger
		h.host.ShowWriting(what, need)
	}
	path, do := h.host.Settings().Model, h.host.Do
	go func() {
		defer cancel()
		w, err := h.file.open(path)
		var r *textgen.Result
		if err == nil {
			opts := textgen.Options{Sampling: qwen3vl.DefaultSampling, OnText: func(p string) {
				do(func() { h.Suggestion.Append(p) })
			}}
			r, err = run(ctx, w, opts)
		}
		stopped := ctx.Err() != nil // read before the deferred cancel
		do(func() { h.ended(what, r, err, stopped, done) })
	}()
}

// ended shows how a writing ended, on the UI goroutine, and starts the next waiting Check.
func (h *Panel) ended(what string, r *textgen.Result, err error, stopped bool, done func(*textgen.Result)) {
	h.busy(false, "")
	if h.m.Current() == 0 && h.host.WritingEnded != nil {
		h.host.WritingEnded() // the memory panel back to the draft's prediction
	}
	switch {
	case stopped:
		h.setStatus(what + " stopped; the prompt is as it was.")
		h.SuggestionBox.Hide()
	case err != nil:
		h.setStatus(what + " failed")
		h.say("%s: %v", what, err)
		h.SuggestionBox.Hide()
	default:
		h.setStatus(fmt.Sprintf("%s: %d tokens, %.1f tokens/s", what, r.Tokens, r.TokensPerSecond))
		done(r)
	}
	h.next()
}

// next starts the first waiting Check, if any.
func (h *Panel) next() {
	if len(h.waiting) == 0 || h.cancel != nil {
		return
	}
	start := h.waiting[0]
	h.waiting = h.waiting[1:]
	start()
}

// startSuggestion empties the suggestion for a new writing (not while one runs: that one's text
// stays, and write says why the new one waits).
func (h *Panel) startSuggestion() {
	if h.cancel != nil {
		return
	}
	h.Suggestion.SetText("")
	h.SuggestionBox.Show()
}

// runExpand turns the prompt (the idea) into a suggestion.
func (h *Panel) runExpand() {
	idea := strings.TrimSpace(h.m.Draft().Prompt)
	if idea == "" {
		h.say("Write a few words in the prompt first (a subject, a scene): Expand works from them.")
		return
	}
	h.startSuggestion()
	h.write("Expand", h.plan(len(idea), nil), func(ctx context.Context, w *textgen.Writer, o textgen.Options) (*textgen.Result, error) {
		return w.Expand(ctx, idea, o)
	}, h.suggest)
}

// runDescribe writes a prompt for the chosen image.
func (h *Panel) runDescribe() {
	h.RefreshSources()
	img, err := h.sourceImage()
	if err != nil {
		h.say("Describe: %v", err)
		return
	}
	h.describeImage(img)
}

// describeImage writes a prompt for img into the suggestion.
func (h *Panel) describeImage(img *image.NRGBA) {
	h.startSuggestion()
	h.write("Describe", h.plan(len(textgen.DescribeQuestion), img), func(ctx context.Context, w *textgen.Writer, o textgen.Options) (*textgen.Result, error) {
		return w.Describe(ctx, img, "", o)
	}, h.suggest)
}

// suggest puts a finished writing's text in the suggestion.
func (h *Panel) suggest(r *textgen.Result) { h.Suggestion.SetText(r.Text) }

// stopWriting cancels the running writing and the Checks waiting; the prompt is untouched.
func (h *Panel) stopWriting() {
	h.waiting = nil
	if h.cancel != nil {
		h.cancel()
	}
}

// acceptSuggestion makes the (possibly edited) suggestion the prompt; Undo restores the idea.
func (h *Panel) acceptSuggestion() {
	text := strings.TrimSpace(h.Suggestion.Text)
	if text == "" {
		h.say("The model wrote nothing to use: ask again, or write the prompt yourself.")
		return
	}
	h.idea, h.hasIdea = h.m.Draft().Prompt, true
	h.m.SetPrompt(text)
	h.SuggestionBox.Hide()
	h.Undo.Show()
}

// discardSuggestion drops the suggestion; the prompt stays as it was.
func (h *Panel) discardSuggestion() {
	h.stopWriting()
	h.Suggestion.SetText("")
	h.SuggestionBox.Hide()
}

// undoAccept puts the idea back in the prompt.
func (h *Panel) undoAccept() {
	if !h.hasIdea {
		return
	}
	h.m.SetPrompt(h.idea)
	h.hasIdea = false
	h.Undo.Hide()
}
