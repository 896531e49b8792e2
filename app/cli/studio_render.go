package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"io"
	"os"
	"path/filepath"
	"sync"

	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/loralib"
	"easel/app/preview"
	"easel/app/studio"
	"easel/app/studiogen"
	"easel/engine/cmf"
	"easel/engine/pipeline"
)

// studioRequest is a studio job's request as app/cli writes and reads it: the generate flags of
// one image (its own --seed and --variation-seed; no --count, --out or --model), with files as
// studioInputRef references to the hub's inputs bucket, and the batch it belongs to (for the
// PNG's batch record).
type studioRequest struct {
	Args []string `json:"args,omitempty"`
	// Pipeline, instead of Args, is a request of the A1111 API (easel serve --studio).
	Pipeline *studiogen.PipelineRequest `json:"pipeline,omitempty"`
	BatchID  string                     `json:"batch_id"`
	Index    int                        `json:"index"`
	Count    int                        `json:"count"`
}

// studioInputRef prefixes a file argument that lives in the hub's inputs bucket.
const studioInputRef = "studio-input:"

// studioRenderer renders studio jobs on this Mac's model: the model opens on the first job and
// stays open; each job runs the generate path (draft → request → pipeline → finish → PNG) as
// `easel generate --seed S` does here, so its pixels are that run's bit for bit.
type studioRenderer struct {
	modelPath, backend string
	model              *cmf.File
	fingerprint        string // modelFingerprint of the model

	mu   sync.Mutex
	p    *pipeline.Pipeline
	name string // the backend the pipeline runs on, for the PNG
	// calib renders the previews a job asks for (started on the first such job).
	calib *preview.Calibrator
}

// previewFunc is the calibrated latent preview of this model, started on first use.
func (r *studioRenderer) previewFunc() pipeline.PreviewFunc {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calib == nil {
		cache, err := preview.DefaultCache()
		if err != nil {
			cache = preview.Cache{}
		}
		r.calib = &preview.Calibrator{Cache: cache}
		r.calib.Start(r.modelPath)
	}
	return r.calib.Render
}

// newStudioRenderer opens the model file (its header and tensor table: the fingerprint).
func newStudioRenderer(modelPath, backend string) (*studioRenderer, *failure) {
	m, f := openModel(modelPath)
	if f != nil {
		return nil, f
	}
	return &studioRenderer{modelPath: modelPath, backend: backend, model: m, fingerprint: modelFingerprint(m)}, nil
}

func (r *studioRenderer) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.p != nil {
		r.p.Close()
	}
	if r.calib != nil {
		r.calib.Stop()
	}
	r.model.Close()
}

// pipeline builds the pipeline once.
func (r *studioRenderer) pipeline(ctx context.Context) (*pipeline.Pipeline, string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.p != nil {
		return r.p, r.name, nil
	}
	quiet := newGenerateOutput(true, io.Discard, io.Discard)
	choice, f := chooseBackend(r.backend, quiet)
	if f != nil {
		return nil, "", f.err
	}
	p, err := jobs.OpenPipelineContext(ctx, r.model, choice, adjustPipeline)
	if err != nil {
		return nil, "", err
	}
	r.p, r.name = p, p.Backend().Name()
	if dev := p.DenoiserDevice(); dev != "" {
		r.name = "metal (" + dev + ") + " + r.name
	}
	return r.p, r.name, nil
}

// Render makes one job's PNG.
func (r *studioRenderer) Render(ctx context.Context, job *studio.Job, inputs studio.Inputs, progress func(studio.Step)) ([]byte, error) {
	var sr studioRequest
	if err := json.Unmarshal(job.Request, &sr); err != nil {
		return nil, fmt.Errorf("not a request this Easel reads: %v", err)
	}
	// Everything the job names is checked before its folder is made.
	var g *generateArgs
	var err error
	if sr.Pipeline != nil {
		if err := sr.Pipeline.Check(); err != nil {
			return nil, err
		}
	} else if g, err = checkStudioJobArgs(sr.Args, r.modelPath); err != nil {
		return nil, err
	}
	dir, err := newStudioJobDir()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	png, err := r.renderIn(ctx, dir, g, &sr, job, inputs, progress)
	return png, scrubJobDir(err, dir)
}

// renderIn renders the checked job in its folder.
func (r *studioRenderer) renderIn(ctx context.Context, dir string, g *generateArgs, sr *studioRequest, job *studio.Job, inputs studio.Inputs, progress func(studio.Step)) ([]byte, error) {
	if sr.Pipeline != nil {
		return r.renderPipeline(ctx, sr.Pipeline, job.Previews, inputs, dir, progress)
	}
	if err := fetchStudioFiles(ctx, g, inputs, dir); err != nil {
		return nil, err
	}
	p, backendName, err := r.pipeline(ctx)
	if err != nil {
		return nil, err
	}
	out := newGenerateOutput(true, io.Discard, io.Discard)
	img, settings, err := renderOne(ctx, g, p, out, progress)
	if err != nil {
		return nil, err
	}
	settings.ModelHash, settings.Backend = r.fingerprint, backendName
	settings.InBatch(sr.BatchID, sr.Index, sr.Count)
	path := filepath.Join(dir, "out.png")
	if err := imagefile.WriteFile(path, img, settings); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// renderOne runs one image of the generate path on an open pipeline: the draft, its LoRAs and
// preset, the run, the start image's finish and a --hires second pass.
func renderOne(ctx context.Context, g *generateArgs, p *pipeline.Pipeline, out *generateOutput, progress func(studio.Step)) (img *image.NRGBA, settings *imagefile.Settings, err error) {
	d, seed, f := g.draft()
	if f != nil {
		return nil, nil, f.err
	}
	job, err := d.Job(seed)
	if err != nil {
		return nil, nil, err
	}
	req := job.Request
	req.Count = 0
	applied, f := loadLoRAs(g.loras, p, out)
	if f != nil {
		return nil, nil, f.err
	}
	req.LoRAs = loralib.ForModel(applied)
	if pr := loralib.FirstPreset(applied); pr != nil && g.loraPreset {
		steps, cfg, sigmas, scheduler := loralib.PresetSettings(pr, p.SchedulerConfig())
		if !g.set["steps"] {
			req.Steps, req.Sigmas, req.Scheduler = steps, sigmas, scheduler
		}
		if !g.set["cfg"] {
			req.CFG = cfg
		}
	}
	run := func(do func(chan<- pipeline.Event) (*pipeline.Result, error)) (*pipeline.Result, error) {
		return studiogen.RunReporting(do, false, progress)
	}
	first, err := run(func(ev chan<- pipeline.Event) (*pipeline.Result, error) { return p.Run(ctx, req, ev) })
	if err != nil {
		return nil, nil, err
	}
	im, err := job.Finish(first)
	if err != nil {
		return nil, nil, err
	}
	s := d.FileSettings(first)
	s.Width, s.Height = im.Rect.Dx(), im.Rect.Dy()
	s.NegativePrompt = negativeUsed(req.NegativePrompt, first.CFG)
	s.LoRAs = loralib.Refs(applied)
	if g.batch.hires > 0 {
		var hs *imagefile.HiresSettings
		second, err := run(func(ev chan<- pipeline.Event) (*pipeline.Result, error) {
			r, h, err := secondPass(ctx, p, req, first, im, &g.batch, ev)
			hs = h
			return r, err
		})
		if err != nil {
			return nil, nil, err
		}
		im, s.Hires = second.Image, hs
	}
	return im, s, nil
}
