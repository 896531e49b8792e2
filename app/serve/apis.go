package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"easel/app/serve/comfy"
	"easel/app/serve/openai"
	"easel/app/serve/render"
)

// otherAPIs adds the OpenAI images API (app/serve/openai) and ComfyUI's routes for template
// clients (app/serve/comfy) to mux, both over the Server as their render.Renderer. It returns the
// routes that need no credentials (the OpenAI API's expiring image URLs).
func (s *Server) otherAPIs(mux *http.ServeMux) *http.ServeMux {
	public := http.NewServeMux()
	oa := openai.New(s, openai.Options{MaxBody: s.cfg.MaxBody})
	oa.Register(mux, public)
	cf := comfy.New(s, comfy.Options{MaxBody: s.cfg.MaxBody, MaxPending: s.cfg.MaxPending})
	cf.Register(mux)
	s.shutters = append(s.shutters, oa.Close, cf.Close)
	return public
}

// closeAPIs stops the other APIs' work (their queued prompts, websockets, stored images).
func (s *Server) closeAPIs() {
	for _, c := range s.shutters {
		c()
	}
}

// Render makes a render.Request's images as txt2img and img2img make theirs: the same drafts,
// queue jobs and pictures (render.Renderer).
func (s *Server) Render(ctx context.Context, req render.Request, progress func(render.Progress)) (*render.Result, error) {
	bad := func(field, msg string) error {
		return &render.Error{Kind: render.ErrBadRequest, Field: field, Msg: noPaths(msg)}
	}
	for _, t := range []struct{ field, v string }{{"prompt", req.Prompt}, {"negative_prompt", req.Negative}} {
		if n := len([]rune(t.v)); n > maxPromptChars {
			return nil, bad(t.field, fmt.Sprintf("%s is %d characters: this server takes at most %d; shorten it", t.field, n, maxPromptChars))
		}
	}
	n := max(req.Count, 1)
	if n > maxImagesPerRequest {
		return nil, bad("n", fmt.Sprintf("%d images: this server makes at most %d per request", n, maxImagesPerRequest))
	}
	p := &params{Prompt: req.Prompt, Negative: req.Negative, Seed: int64(req.Seed), Subseed: -1, Width: req.Width, Height: req.Height,
		Steps: req.Steps, CFG: req.CFG, BatchSize: n, NIter: 1, SendImages: true, Conditions: req.Conditions, Start: req.Start}
	if req.RandomSeed {
		p.Seed = -1
	}
	p.SizeAuto = req.Width == 0 || req.Height == 0
	p.SizeGiven = !p.SizeAuto
	if req.Model != "" {
		path, err := s.models.find(req.Model)
		switch {
		case err != nil:
			return nil, bad("model", err.Error())
		case path == s.models.currentPath():
		case s.cfg.UseModel == nil:
			p.Warnings = append(p.Warnings, fmt.Sprintf("model %q: this server cannot render one request with another model; the current model was used", req.Model))
		default:
			p.Model = path
		}
	}
	f := &fields{m: nil, seen: map[string]bool{}}
	var warns []string
	p.Prompt, p.LoRAs, warns = takeLoRAs(f, "prompt", p.Prompt, s.cfg.LoRADir)
	if len(f.errs) > 0 {
		return nil, bad("prompt", f.errs[0].Msg)
	}
	p.Warnings = append(p.Warnings, warns...)
	if w := emphasisWarning(p.Prompt, p.Negative); w != "" {
		p.Warnings = append(p.Warnings, w)
	}
	plans, details := s.drafts(p)
	if details != nil {
		field := ""
		if len(details[0].Loc) > 1 {
			field = fmt.Sprint(details[0].Loc[len(details[0].Loc)-1])
		}
		return nil, bad(field, details[0].Msg)
	}
	start := time.Now()
	out, err := s.submitGroups(ctx, "API "+req.Origin, plans, singles(len(plans)), nil, req.Kind, progress)
	if err != nil {
		return nil, err
	}
	if out.failed != nil {
		for _, k := range badRequestKinds {
			if errors.Is(out.failed, k) {
				return nil, bad("", out.failed.Error())
			}
		}
		if errors.Is(out.failed, context.Canceled) {
			return nil, &render.Error{Kind: render.ErrBusy, Msg: "the server is shutting down", RetryAfter: 5}
		}
		s.cfg.Log.Printf("%s from %s failed: %v", req.Kind, req.Origin, out.failed)
		return nil, &render.Error{Kind: render.ErrFailed, Msg: noPaths(out.failed.Error())}
	}
	res := &render.Result{Interrupted: out.interrupted}
	for i, r := range out.results {
		if r == nil {
			continue
		}
		img, set, err := out.owners[i].Picture(r)
		if err != nil {
			return nil, &render.Error{Kind: render.ErrFailed, Msg: noPaths(err.Error())}
		}
		if r.Interrupted {
			res.Interrupted = true
			p.Warnings = append(p.Warnings, fmt.Sprintf("image %d was interrupted at step %d of %d", i+1, r.StepsDone, r.StepsRun))
		}
		res.Pictures = append(res.Pictures, render.Picture{Image: img, Settings: set, Seed: plans[i].Seed})
	}
	res.Warnings = append(dedupe(p.Warnings), runNotices(out)...)
	if out.skipped > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d image(s) skipped", out.skipped))
	}
	prompt := fmt.Sprintf("a prompt of %d characters", len(p.Prompt))
	if s.cfg.LogPrompts {
		prompt = fmt.Sprintf("prompt %q", p.Prompt)
	}
	s.cfg.Log.Printf("%s from %s: %d of %d image(s), seed %d, %s, %.1f s", req.Kind, req.Origin, len(res.Pictures), len(plans), plans[0].Seed, prompt, time.Since(start).Seconds())
	return res, nil
}

// Model is the current model and the folder's (render.Renderer).
func (s *Server) Model() render.Model {
	name, _, d := s.models.current()
	return render.Model{Name: name, Names: s.models.list(), Defaults: d}
}

// Save keeps a picture as save_images does (render.Renderer): nothing with --no-save or where the
// host keeps every image itself.
func (s *Server) Save(p render.Picture) error {
	if s.cfg.Save == nil {
		return nil
	}
	return s.cfg.Save(p.Image, p.Settings)
}
