package serve

import (
	"context"
	"errors"
	"fmt"
	"image"
	"net/http"
	"strings"
	"time"

	"easel/app/compose"
	"easel/app/imagefile"
	"easel/app/imagework"
	"easel/app/jobs"
	"easel/app/serve/render"
	"easel/engine/latents"
	"easel/engine/pipeline"
	"easel/engine/seed"
)

// drafts turns a request's params into one plan per image: the same compose.Draft the window
// makes, with A1111's seeds (seed + i, or with a variation strength the same seed and subseed + i).
func (s *Server) drafts(p *params) ([]plan, []detailItem) {
	_, modelPath, defaults := s.models.current()
	if p.Model != "" && p.Model != modelPath { // override_settings.sd_model_checkpoint
		d, err := readDefaults(p.Model)
		if err != nil {
			return nil, []detailItem{{Loc: []any{"body", "override_settings", "sd_model_checkpoint"}, Msg: noPaths(err.Error()), Type: "value_error"}}
		}
		modelPath, defaults = p.Model, d
	}
	modelHash := s.hashes.lookup(modelPath) // known since startup, or "" while it is being read
	w, h := p.Width, p.Height
	if w == 0 {
		w = a1111Side // A1111's default, whatever the model's
	}
	if h == 0 {
		h = a1111Side
	}
	ex := exactSize{}
	if rw, rh := renderSide(w), renderSide(h); rw != w || rh != h {
		ex = exactSize{Want: image.Pt(w, h), Render: image.Pt(rw, rh)}
		w, h = rw, rh // rendered at the covering size, centre-cropped (exactsize.go)
	}
	base := compose.Draft{Prompt: p.Prompt, Negative: p.Negative, Size: compose.SizeExact, CustomW: w, CustomH: h,
		Steps: p.Steps, CFG: p.CFG, Backend: s.cfg.Backend, Model: modelPath, LoRAs: p.LoRAs, Conditions: p.Conditions}
	if p.SizeAuto { // the model's (or the start image's) size, as `easel generate` without --size
		base.Size, base.CustomW, base.CustomH, ex = compose.SizeAuto, 0, 0, exactSize{}
	}
	if p.Negative != "" && (p.CFG == 0 && defaults.CFG <= 1 || p.CFG != 0 && p.CFG <= 1) {
		cfg := p.CFG
		if cfg == 0 {
			cfg = max(defaults.CFG, 1)
		}
		p.Warnings = append(p.Warnings, fmt.Sprintf("negative_prompt was not used: with cfg_scale %g the model ignores it; send a cfg_scale above 1 (like 4) to use it", cfg))
	}
	bw, bh, err := base.OutputSize()
	if err != nil {
		return nil, []detailItem{{Loc: []any{"body", "width"}, Msg: err.Error(), Type: "value_error"}}
	}
	bw, bh = bw/pipeline.SizeMultiple*pipeline.SizeMultiple, bh/pipeline.SizeMultiple*pipeline.SizeMultiple // as the pipeline floors them
	if st, bad := s.startOf(p); bad != nil {
		return nil, bad
	} else if st != nil {
		base.Start = st
		if !p.SizeGiven || p.SizeAuto {
			base.Size = compose.SizeFromImage // the size follows the init image, as `easel generate --init`
		}
	}
	if base.Size != compose.SizeExact {
		ex = exactSize{}
	}
	if ex.crops() {
		if base.Start != nil {
			st := *base.Start
			ex.start(&st)
			base.Start = &st
		}
		p.Warnings = append(p.Warnings, ex.warning())
	}
	if p.Seed == -1 {
		p.Seed = randomSeed()
	}
	if p.Subseed == -1 {
		p.Subseed = randomSeed()
	}
	n := p.BatchSize * p.NIter
	plans := make([]plan, n)
	for i := range n {
		d := base
		sd, sub := uint64(p.Seed)+uint64(i), uint64(p.Subseed)+uint64(i)
		if p.SubseedStrength != 0 {
			sd = uint64(p.Seed)
		}
		d.Seed = sd
		job, err := d.Job(sd)
		if err != nil {
			field := "body"
			switch {
			case errors.Is(err, imagework.ErrNothingToRepaint):
				field = "mask"
			case d.Start != nil:
				field = "init_images"
			}
			return nil, []detailItem{{Loc: []any{"body", field}, Msg: err.Error(), Type: "value_error"}}
		}
		req := job.Request
		if p.EaselSigmas != nil {
			req.Sigmas, req.Steps = p.EaselSigmas, 0
		}
		if p.EaselScheduler != nil {
			req.Scheduler = p.EaselScheduler
		}
		if d.Start != nil {
			bw, bh = req.Width, req.Height
		}
		if p.SubseedStrength != 0 {
			noise, err := seed.VariationNoise(sd, seed.Variation{Seed: sub, Strength: p.SubseedStrength}, latentChannels, bh/16, bw/16)
			if err == nil {
				noise, err = latents.Pack(noise, latentChannels, bh/16, bw/16)
			}
			if err != nil {
				return nil, []detailItem{{Loc: []any{"body", "subseed_strength"}, Msg: err.Error(), Type: "value_error"}}
			}
			req.Noise = noise
		}
		req.Preview = s.cfg.Preview
		stop := make(chan struct{})
		req.Stop = stop
		plans[i] = plan{Draft: d, Seed: sd, Subseed: sub, Request: req, Prep: job.Prepared, Exact: ex, stop: stop, ModelHash: modelHash}
		if i == 0 {
			p.Warnings = append(p.Warnings, job.Notices...)
		}
	}
	return plans, nil
}

// latentChannels is the Qwen-Image-2.1 VAE's latent channel count (z_dim), the starting noise's.
const latentChannels = 64

// outcome is what a request's jobs came to.
type outcome struct {
	b           *batch
	results     []*pipeline.Result // nil where the image was not made
	owners      []*apiJob          // the job each plan ran in (its Picture makes the answer's image)
	interrupted bool
	skipped     int
	failed      error
}

// run submits the plans as jobs and waits for them. It returns false when it has answered
// already (the queue full or closed) or the client went away (its jobs are cancelled).
func (s *Server) run(w http.ResponseWriter, r *http.Request, plans []plan, label string) (outcome, bool) {
	return s.runGroups(w, r, plans, singles(len(plans)), nil, label)
}

// runGroups is run with the plans in groups, one job each (a group of more than one runs its
// plans as the cells of one request over one prefill: cellgroups.go); varStrengths are the plans'
// variation strengths (nil: none has one). The outcome's results are the plans'.
func (s *Server) runGroups(w http.ResponseWriter, r *http.Request, plans []plan, groups [][]int, varStrengths []float64, label string) (outcome, bool) {
	out, err := s.submitGroups(r.Context(), "API "+clientHost(r), plans, groups, varStrengths, label, nil)
	var re *render.Error
	switch {
	case err == nil:
		return out, true
	case errors.As(err, &re) && errors.Is(err, render.ErrBusy):
		busy(w, re.RetryAfter, re.Msg)
	case errors.Is(err, render.ErrGone):
		s.cfg.Log.Printf("%s from %s: %v", label, clientHost(r), err)
	default:
		busy(w, 30, err.Error())
	}
	return outcome{}, false
}

// submitGroups queues the groups' jobs and waits for them; a refusal is a *render.Error (ErrBusy:
// the queue is full or closed; ErrGone: ctx ended and the jobs were cancelled). progress, when
// set, hears every step of the jobs.
func (s *Server) submitGroups(ctx context.Context, origin string, plans []plan, groups [][]int, varStrengths []float64, label string, progress func(render.Progress)) (outcome, error) {
	b := &batch{start: time.Now(), progress: progress}
	subs := make([]jobs.Submission, len(groups))
	for i, idx := range groups {
		pl := plans[idx[0]]
		aj := &apiJob{b: b, index: i, done: make(chan jobs.Job, 1), plan: &plans[idx[0]], origin: origin}
		if len(idx) > 1 {
			for _, k := range idx {
				aj.cells = append(aj.cells, &plans[k])
			}
		}
		b.jobs = append(b.jobs, aj)
		subs[i] = jobs.Submission{Request: groupRequest(plans, idx, varStrengths), Label: jobLabel(label, pl.Draft.Prompt, pl.Seed), Origin: origin, Owner: aj}
	}
	s.tracker.add(b)
	defer s.tracker.remove(b)
	if s.cfg.Spread != nil { // the images render at once elsewhere (Config.Spread)
		reqs := make([]pipeline.Request, len(subs))
		for i := range subs {
			reqs[i] = subs[i].Request
		}
		defer s.cfg.Spread(reqs)()
	}
	ids, err := s.cfg.Queue.SubmitAll(subs, s.cfg.MaxPending)
	switch {
	case errors.Is(err, jobs.ErrFull):
		return outcome{}, &render.Error{Kind: render.ErrBusy, Msg: err.Error() + ": try again later", RetryAfter: s.tracker.retryAfter()}
	case err != nil:
		return outcome{}, &render.Error{Kind: render.ErrBusy, Msg: err.Error(), RetryAfter: 30}
	}
	b.mu.Lock()
	b.ids = ids
	interrupted := b.interrupted
	b.mu.Unlock()
	if interrupted { // /interrupt came while the jobs were being queued
		b.cancelRest(s.cfg.Queue)
	}
	out := outcome{b: b, results: make([]*pipeline.Result, len(plans)), owners: make([]*apiJob, len(plans))}
	for i, idx := range groups {
		for _, k := range idx {
			out.owners[k] = b.jobs[i]
		}
	}
	for i, aj := range b.jobs {
		select {
		case j := <-aj.done:
			switch j.State {
			case jobs.Done:
				groupResults(out.results, groups[i], j.Result, nil)
			case jobs.Cancelled: // a group keeps the cells it finished (/interrupt)
				b.mu.Lock()
				groupResults(out.results, groups[i], nil, aj.finished)
				b.mu.Unlock()
			case jobs.Failed:
				if out.failed == nil {
					out.failed = j.Err
				}
			}
		case <-ctx.Done():
			b.cancel(s.cfg.Queue)
			return outcome{}, &render.Error{Kind: render.ErrGone, Msg: fmt.Sprintf("the client went away; its %d job(s) were cancelled", len(ids))}
		}
	}
	b.mu.Lock()
	out.interrupted, out.skipped = b.interrupted, b.skipped
	b.mu.Unlock()
	return out, nil
}

// jobLabel is the queue's name for an API job.
func jobLabel(kind, prompt string, sd uint64) string {
	p := strings.Join(strings.Fields(prompt), " ")
	if r := []rune(p); len(r) > 32 {
		p = string(r[:31]) + "…"
	}
	if p == "" {
		p = "(no prompt)"
	}
	return fmt.Sprintf("%s · %s · seed %d", kind, p, sd)
}

// badRequestKinds are the pipeline's refusals of a request (422), as opposed to failures (500).
var badRequestKinds = []error{pipeline.ErrSize, pipeline.ErrImages, pipeline.ErrSettings, pipeline.ErrNoise}

// generate is txt2img and img2img after their own fields: plans, jobs, the answer.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, kind string, f *fields, p *params, extra map[string]any) {
	if s.xyzPlot(w, r, kind, f, p, extra) { // script_name "x/y/z plot" (xyzplot.go)
		return
	}
	ck := s.claimCheckpoints(kind, f, p) // resumable.go: the seeds of a run the server's restart stopped
	plans, bad := s.drafts(p)
	if bad != nil {
		ck.end(false)
		unprocessable(w, bad)
		return
	}
	_, modelPath, _ := s.models.current()
	ck.attach(plans, p, modelPath)
	start := time.Now()
	out, ok := s.run(w, r, plans, kind)
	ck.end(!s.closing.Load()) // kept only for a retry after the server's restart
	if !ok {
		return
	}
	if p.Hires != nil && out.failed == nil && !out.interrupted { // txt2img's enable_hr (hires.go)
		if plans, out, ok = s.hiresPass(w, r, kind, p, plans, out); !ok {
			return
		}
	}
	if out.failed != nil {
		for _, k := range badRequestKinds {
			if errors.Is(out.failed, k) {
				unprocessable(w, []detailItem{{Loc: []any{"body"}, Msg: out.failed.Error(), Type: "value_error"}})
				return
			}
		}
		if errors.Is(out.failed, context.Canceled) {
			busy(w, 5, "the server is shutting down")
			return
		}
		s.cfg.Log.Printf("%s from %s failed: %v", kind, clientHost(r), out.failed)
		serverError(w, "GenerationError", out.failed)
		return
	}
	images := []string{}
	var sets []*imagefile.Settings
	var used []plan
	for i, res := range out.results {
		if res == nil {
			continue
		}
		img, set, err := out.b.jobs[i].Picture(res)
		if err != nil {
			serverError(w, "PasteBackError", err)
			return
		}
		if res.Interrupted {
			p.Interrupted = true
			p.Warnings = append(p.Warnings, fmt.Sprintf("image %d was interrupted at step %d of %d: it is the model's estimate of the image at that step", i+1, res.StepsDone, res.StepsRun))
		}
		if p.SaveImages {
			p.Warnings = append(p.Warnings, s.save(img, set)...)
		}
		sets = append(sets, set)
		used = append(used, plans[i])
		if p.SendImages {
			enc, err := encodePNG(img, set, p.Alpha)
			if err != nil {
				serverError(w, "EncodeError", err)
				return
			}
			images = append(images, enc)
		}
	}
	warnings := dedupe(p.Warnings)
	warnings = append(warnings, runNotices(out)...)
	p.Interrupted = p.Interrupted || out.interrupted
	if out.interrupted {
		warnings = append(warnings, fmt.Sprintf("interrupted: %d of %d images were made", len(sets), len(plans)))
	}
	if out.skipped > 0 {
		warnings = append(warnings, fmt.Sprintf("%d image(s) skipped", out.skipped))
	}
	info := s.info(p, plans, used, sets, warnings, extra)
	s.logRequest(r, kind, p, plans, len(sets), time.Since(start))
	writeJSON(w, http.StatusOK, map[string]any{"images": images, "parameters": s.parameters(p, plans, extra), "info": info})
}

// logRequest writes one line per request; the prompt only with LogPrompts.
func (s *Server) logRequest(r *http.Request, kind string, p *params, plans []plan, made int, took time.Duration) {
	prompt := fmt.Sprintf("a prompt of %d characters", len(p.Prompt))
	if s.cfg.LogPrompts {
		prompt = fmt.Sprintf("prompt %q", p.Prompt)
	}
	w, h, _ := plans[0].Draft.OutputSize()
	s.cfg.Log.Printf("%s from %s: %d of %d image(s) %d×%d, seed %d, %s, %.1f s", kind, clientHost(r), made, len(plans), w, h, plans[0].Seed, prompt, took.Seconds())
}

// runNotices are what the request's runs said on their way (a stage a device declined to the
// CPU, a tuning that failed) and the devices' recoveries (a GPU overflow, watchdog stop or
// out-of-memory a retry fixed, a step moved to the CPU: pipeline.Result.Recoveries), each
// sentence once however many images said it, for the response's warnings.
func runNotices(out outcome) []string {
	var said []string
	seen := map[string]bool{}
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			said = append(said, n)
		}
	}
	out.b.mu.Lock()
	for _, aj := range out.b.jobs {
		for _, n := range aj.notices {
			add(n)
		}
	}
	out.b.mu.Unlock()
	for _, res := range out.results {
		if res != nil {
			for _, r := range res.Recoveries {
				add(r.Notice)
			}
		}
	}
	return said
}
