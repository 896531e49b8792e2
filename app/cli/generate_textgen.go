package cli

import (
	"context"
	"fmt"
	"image"
	"strconv"

	"easel/app/textgen"
	"easel/engine/cmf"
	"easel/engine/ml/cpu"
	"easel/engine/qwen3vl"
)

// generate --expand and --check: the model's text encoder writing around a generation.

// generateTextArgs are generate's flags for writing.
type generateTextArgs struct {
	expand, check bool
	idea          string // the idea --expand expanded (the PNG records it)
}

// textEvent is the JSON line --expand and --check print under --json.
type textEvent struct {
	Stage  string            `json:"stage"` // "expanded" or "checked"
	Idea   string            `json:"idea,omitempty"`
	Prompt string            `json:"prompt,omitempty"`
	Path   string            `json:"path,omitempty"`
	Checks []textgen.Verdict `json:"checks,omitempty"`
	Tokens int               `json:"tokens"`
}

// expandPrompt replaces the prompt by its expansion when --expand is given, keeping the idea.
// The seed, when --seed is a number, seeds the writing too, so the run repeats.
func expandPrompt(g *generateArgs, out *generateOutput) *failure {
	if g.text.check && !g.text.expand {
		return checkCanWrite(g.model)
	}
	if !g.text.expand {
		return nil
	}
	w, _, closeFn, f := openTextWriter(g.model, g.backend, out.stderr)
	if f != nil {
		return f
	}
	defer closeFn()
	opts := textgen.Options{Sampling: qwen3vl.DefaultSampling}
	if s, err := strconv.ParseUint(g.seed, 10, 64); err == nil {
		opts.Seed = s
	}
	ctx, stop := interruptContext()
	defer stop()
	r, err := w.Expand(ctx, g.prompt, opts)
	switch {
	case ctx.Err() != nil:
		return fail(ExitCancelled, "cancelled while expanding the prompt; no image was made")
	case err == textgen.ErrEmptyIdea:
		return fail(ExitUsage, "--expand: %v", err)
	case err != nil:
		return fail(ExitFailure, "--expand: %v", err)
	case r.Text == "":
		return fail(ExitFailure, "--expand: the model wrote no prompt (%d tokens); run again with another --seed, or leave out --expand", r.Tokens)
	}
	g.text.idea, g.prompt = g.prompt, r.Text
	if out.json {
		out.enc.Encode(textEvent{Stage: "expanded", Idea: g.text.idea, Prompt: g.prompt, Tokens: r.Tokens})
	} else {
		fmt.Fprintf(out.stderr, "expanded %q into: %s\n", g.text.idea, g.prompt)
	}
	return nil
}

// checkCanWrite refuses --check before any image is made when the model file lacks the language
// head.
func checkCanWrite(path string) *failure {
	m, f := openModel(path)
	if f != nil {
		return f
	}
	defer m.Close()
	info, err := qwen3vl.DescribeHead(m)
	if err != nil {
		return &failure{ExitModelInvalid, err}
	}
	if !info.Present {
		return fail(ExitModelInvalid, "--check: %s: %s; no image was made", path, qwen3vl.NoHeadAdvice(info))
	}
	return nil
}

// checkSaved asks, when --check is given, whether each element of the prompt is in the saved
// image, greedily (the answer does not depend on a seed), on the CPU beside the pipeline.
func checkSaved(ctx context.Context, g *generateArgs, model *cmf.File, img *image.NRGBA, s *savedImage, out *generateOutput) *failure {
	if !g.text.check {
		return nil
	}
	enc, err := qwen3vl.NewEncoder(cpu.New(), model)
	if err != nil {
		return &failure{ExitModelInvalid, err}
	}
	w, err := textgen.New(model, enc)
	if err != nil {
		return &failure{ExitModelInvalid, fmt.Errorf("--check: %v", err)}
	}
	verdicts, r, err := w.Check(ctx, img, g.prompt, textgen.Options{})
	if err != nil {
		if ctx.Err() != nil {
			return fail(ExitCancelled, "cancelled while checking %s (the image is saved)", s.Path)
		}
		return fail(ExitFailure, "--check %s: %v (the image is saved)", s.Path, err)
	}
	if out.json {
		out.enc.Encode(textEvent{Stage: "checked", Path: s.Path, Checks: verdicts, Tokens: r.Tokens})
		return nil
	}
	fmt.Fprintf(out.stdout, "check %s:\n", s.Path)
	for _, v := range verdicts {
		fmt.Fprintf(out.stdout, "  %s %s\n", v.Mark(), v.Element)
	}
	return nil
}
