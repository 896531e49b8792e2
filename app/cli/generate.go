package cli

import (
	"context"
	"easel/app/checkpoint"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"easel/app/imagefile"
	"easel/app/imagework"
	"easel/app/jobs"
	"easel/app/loralib"
	"easel/app/settings"
	"easel/engine/mmapfile"
	"easel/engine/pipeline"
)

func init() {
	register(&Command{
		Name:    "generate",
		Usage:   "--model M.cmf --prompt TEXT [flags]",
		Summary: "make an image from a prompt and condition images",
		Run:     runGenerate,
	})
}

// Exit codes of easel generate beyond the shared ones: one per kind of bad input.
const (
	ExitModelMissing = 4   // the model file does not exist or cannot be read
	ExitModelInvalid = 5   // the file is not a .cmf, is damaged, or is not a Qwen-Image-2.1 model
	ExitImage        = 6   // a condition image, start image or mask is missing, unreadable, oversized, or there are too many; a mask repaints nothing
	ExitSize         = 7   // the size or aspect ratio is impossible
	ExitSettings     = 8   // steps, CFG scale or seed are impossible
	ExitWrite        = 9   // the image cannot be saved (full disk, unwritable or missing folder)
	ExitMemory       = 10  // the request's cache and activations exceed the machine's memory
	ExitBackend      = 11  // the backend asked for cannot run on this machine (metal off Apple silicon)
	ExitLoRA         = 12  // a LoRA file is missing, unreadable, or made for another model
	ExitModelChanged = 13  // the model file changed or became unreadable during the run (drive unplugged, file truncated or replaced)
	ExitCancelled    = 130 // Ctrl-C (128 + SIGINT, as shells report it)
)

const generateUsage = `usage: easel generate --model M.cmf --prompt TEXT [flags]

  --model M.cmf       the model file (easel convert makes one from a Hugging Face snapshot)
  --prompt TEXT       what to draw (may be empty)
  --negative TEXT     what to steer away from; used when --cfg is above 1
  --image FILE        a condition image (PNG, JPEG, WebP, GIF, BMP, TIFF); repeat for up to 10, in order
  --size WxH          output size in pixels, each side floored to a multiple of 32
  --aspect W:H        output shape at about the model's output resolution² pixels (e.g. 16:9)
  --resolution N      output resolution (default: the model's, 1024); sizes from --aspect or
                      the last condition image hold about N² pixels
  --steps N           denoising steps (default: the model's, 40)
  --cfg S             true-CFG scale (default: the model's, 1 = off)
  --seed N            the noise seed (default: a random one, written into the image)
  --out FILE.png      where to save (default: easel-SEED.png); never left half-written
  --backend B         where the networks run: auto (Metal on a Mac with Apple silicon, else the
                      CPU), metal (fail where Metal cannot run), cpu, or emulator (the whole
                      Metal path on the CPU emulator: slow; EASEL_EMU_FAULT injects GPU faults)
                      (default: the app's backend setting, auto without one)
  --lora FILE[:S]     apply a LoRA (.safetensors) at strength S (default 1; 0 = off, negative
                      inverts it); repeat for several, applied together
  --lora-preset       use the sampling preset of the first LoRA that has one (its steps, CFG and
                      schedule, e.g. 8 steps on the Turbo grid) for what is not given
  --init IMAGE        start from this image instead of noise (img2img); it is cover-cropped to
                      --size/--aspect, or the size follows it (each side floored to a multiple of 32)
  --strength S        how much of the schedule runs from the start image, in (0, 1] (default 0.6;
                      1 with --extend): --steps 8 --strength 0.5 runs 4 steps
  --mask MASK.png     repaint only where the mask is white (grey: partly); scaled to the start
                      image when its size differs
  --mask-grow PX      grow the mask by PX pixels first (default 8)
  --mask-blur PX      then feather it with a Gaussian of PX pixels (default 4)
  --mask-crop PAD     work on the masked area only, PAD pixels around it, at the model's
                      resolution, and paste it back (a small repair in a large image)
  --keep-original=false  do not paste the result back through the mask (by default the saved
                      image keeps the start image's pixels exactly where the mask is black)
  --extend L,T,R,B    grow the canvas by these pixels left, top, right, bottom; the new area is
                      painted from noise and blended into the old edge
  --crop-offset X,Y   move the crop --size/--aspect makes of the start image X pixels right and Y
                      down from its centre (negative: left, up; kept inside the image)
  --count N           a batch of N images (1–100): image i uses seed SEED+i and is the single
                      run with that seed, bit for bit; the prompt, condition images and prefill
                      are computed once. With --out NAME.png the files are NAME-1.png …
                      NAME-N.png, else easel-SEED.png each
  --variation-seed S  a seed whose noise the starting noise moves towards (A1111's variation
                      seed; random when left out); with --count, S+i for image i and the same
                      --seed for all, so the batch varies one image
  --variation-strength V  how far (0 = the seed's own image, 1 = the variation seed's; 0.1–0.3
                      stays near it)
  --hires F           a second pass at F times the size (1.5, 2; at most 2048 a side): the image
                      is resized with Lanczos and run again as image-to-image with the same
                      prompt, condition images, LoRAs and seed; the PNG records both passes
  --hires-strength S  the second pass's strength (default 0.35): it runs
                      N − int(N − N·S) of its N steps
  --hires-steps N     the second pass's scheduled steps (default: the first pass's)
  --hires-upscaler U  the second pass starts from the image upscaled by this learned upscaler (a
                      .pth/.safetensors file, or a name in the upscalers folder) instead of Lanczos
  --render-on HOST:PORT  render on another machine's Easel (Settings → Share on it) through the
                      window's client; the image is pasted back and saved here as a local run's
                      is, bit for bit the same (not with --lora or --hires); --model is not needed
  --token T           that machine's share token
  --json              print one JSON event per line on stdout instead of a progress line
  --verbose           say on stderr which backend runs the denoiser and why
  --expand            first turn the prompt (a short idea) into a detailed one with the model's
                      own text encoder; the PNG records the idea and the prompt used
  --check             after saving, ask the model whether each element the prompt names is in
                      the image; prints ✓/✗ per element (in --json: a "checked" line)
  --from IMAGE.png    make an image Easel saved again: its prompt, negative prompt, size, steps,
                      CFG, seed, condition images and LoRAs (found beside it or, for LoRAs, in
                      the LoRA folder; checked by SHA-256); flags given as well override them
  --noise-seed N      draw the starting noise from N instead of --seed (the seed recorded stays
                      --seed). Without it, a condition image that Easel made with the same seed
                      at the same size moves the noise to a seed derived from it (seed.EditNoise),
                      with a notice: drawing the image's own noise again repeats it instead of
                      editing it. --init images are not affected
  --checkpoint FILE   keep the run resumable: the state after each step is written to FILE (a
                      step never waits for the disk: a slow one skips a checkpoint), the inputs
                      copied beside it (FILE.files/); both are removed once the images are saved
  --resume FILE       continue a run that stopped (crash, kill, power) from its checkpoint, bit
                      for bit the image it would have made; only --out, --model, --backend,
                      --json and --verbose may be given with it (the model must be the same file)

exit codes: 0 saved, 2 bad command line, 4 model missing, 5 not a usable .cmf, 6 bad condition
image, start image or mask (or a mask that repaints nothing), 7 impossible size, 8 impossible
steps/CFG/seed/strength, 9 cannot save, 10 too large for this machine's memory, 11 the backend
cannot run here (metal off Apple silicon), 12 a LoRA is missing, unreadable or for another
model, 13 the model file changed or became unreadable during the run (drive unplugged, file
truncated or replaced), 14 --render-on's machine could not be reached or did not make the
image,
15 the checkpoint cannot be resumed (missing, damaged, newer, or for another model or other
LoRAs), 16 the --hires-upscaler file is missing, truncated, refused or not an upscaler, 130
cancelled (Ctrl-C)`

// interruptContext is cancelled by Ctrl-C or SIGTERM (a test substitutes its own).
var interruptContext = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// adjustPipeline changes the pipeline's options before it is built (a test wraps the denoiser).
var adjustPipeline = func(o pipeline.Options) pipeline.Options { return o }

// failure is an error with the exit code it maps to.
type failure struct {
	code int
	err  error
}

func fail(code int, format string, a ...any) *failure {
	return &failure{code, fmt.Errorf(format, a...)}
}

func runGenerate(args []string, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" {
			fmt.Fprintln(stdout, generateUsage+gridUsage)
			return ExitOK
		}
	}
	if url, token, pin, rest, ok := studioClientArgs(args); ok {
		return runGenerateStudio(url, token, pin, rest, stdout, stderr) // studio_generate.go
	}
	var resumed *checkpoint.Checkpoint
	if resumeFlagGiven(args) {
		run, ck, f := resumeArgs(args, stderr)
		if f != nil {
			fmt.Fprintf(stderr, "easel generate: %v\n", f.err)
			return f.code
		}
		args, resumed = run, ck
	}
	g, err := parseGenerateArgs(args)
	if g != nil {
		g.resume = resumed
	}
	if err != nil {
		fmt.Fprintf(stderr, "easel generate: %v\n\n%s\n", err, generateUsage+gridUsage)
		return ExitUsage
	}
	out := newGenerateOutput(g.json, stdout, stderr)
	out.verbose = g.verbose
	saved, f := generate(g, out)
	for _, s := range saved {
		out.saved(s)
	}
	if f != nil {
		out.failed(f)
		return f.code
	}
	return ExitOK
}

// generate does the work of easel generate: the command line becomes a compose.Draft (as the
// window's settings do), the model opens as app/jobs opens it, and the run is saved with the
// draft's file settings.
//
// A batch (--count) prefills once and saves each image as the batch ends; --hires runs each
// image's second pass before saving it. The images saved before a failure are returned with it.
func generate(g *generateArgs, out *generateOutput) ([]*savedImage, *failure) {
	if g.hasGrid() {
		return generateGrid(g, out)
	}
	if g.from != "" {
		if f := applyFrom(g, out); f != nil {
			return nil, f
		}
	}
	if f := expandPrompt(g, out); f != nil {
		return nil, f
	}
	d, seed, f := g.draft()
	if f != nil {
		return nil, f
	}
	job, err := d.Job(seed)
	switch {
	case errors.Is(err, imagework.ErrNothingToRepaint):
		return nil, &failure{ExitImage, err}
	case errors.Is(err, pipeline.ErrSettings):
		return nil, &failure{ExitSettings, err}
	case err != nil:
		return nil, &failure{ExitSize, err}
	}
	req := job.Request
	outPaths := batchOutPaths(g.out, &req)
	outPath := outPaths[0]
	for _, path := range outPaths {
		if f := checkWritable(path); f != nil {
			return nil, f
		}
	}
	if g.remote.addr != "" {
		for _, n := range job.Notices {
			out.notice(pipeline.Event{Notice: n})
		}
		return generateRemote(g, d, job, outPaths, out)
	}

	choice, f := chooseBackend(g.backend, out)
	if f != nil {
		return nil, f
	}
	out.backendChosen(choice)
	for _, n := range append(sizeNotices(d), job.Notices...) {
		out.notice(pipeline.Event{Notice: n})
	}

	loadStart := time.Now()
	model, f := openModel(g.model)
	if f != nil {
		return nil, f
	}
	defer model.Close()
	if g.fromModelHash != "" && g.fromModelHash != modelFingerprint(model) {
		fmt.Fprintf(out.stderr, "easel generate: note: %s was made with another model file (fingerprint %.10s, this one %.10s), so the image will differ\n",
			g.from, g.fromModelHash, modelFingerprint(model))
	}
	if dir, err := settings.Dir(); err == nil && choice.Metal() {
		choice.SelfTestDir = filepath.Join(dir, "selftest")
		choice.SelfTestProgress = out.selfTestProgress
		choice.TuneDir = filepath.Join(dir, "tuning")
		choice.TuneProgress = out.tuneProgress
		choice.TuneNotice = func(n string) { out.notice(pipeline.Event{Notice: n}) }
	}
	// Ctrl-C stops the run from here on, the first-use self-test included (it caches nothing then).
	ctx, stop := interruptContext()
	defer stop()
	p, err := jobs.OpenPipelineContext(ctx, model, choice, adjustPipeline)
	if errors.Is(err, context.Canceled) {
		return nil, fail(ExitCancelled, "cancelled during the GPU self-test (it runs again next time); %s was not written", outPath)
	}
	if changed := (*mmapfile.FaultError)(nil); errors.As(err, &changed) {
		return nil, fail(ExitModelChanged, "%v; %s was not written", err, outPath)
	}
	if err != nil {
		return nil, fail(ExitModelInvalid, "%s cannot be used: %v", g.model, err)
	}
	defer p.Close()
	backendName := p.Backend().Name()
	if dev := p.DenoiserDevice(); dev != "" {
		backendName = "metal (" + dev + ") + " + backendName
	}
	if _, _, err := p.OutputSize(&req); err != nil {
		return nil, &failure{ExitSize, err}
	}
	applied, f := loadLoRAs(g.loras, p, out)
	if f != nil {
		return nil, f
	}
	req.LoRAs = loralib.ForModel(applied)
	if pr := loralib.FirstPreset(applied); pr != nil {
		if g.loraPreset {
			steps, cfg, sigmas, scheduler := loralib.PresetSettings(pr, p.SchedulerConfig())
			if !g.set["steps"] {
				req.Steps, req.Sigmas, req.Scheduler = steps, sigmas, scheduler
			}
			if !g.set["cfg"] {
				req.CFG = cfg
			}
		} else {
			fmt.Fprintf(out.stderr, "easel generate: note: a LoRA suggests %s; add --lora-preset to use it\n", pr.Describe())
		}
	}

	loaded := time.Since(loadStart)
	var ckpt *checkpointer
	if g.checkpoint != "" {
		if ckpt, f = newCheckpointer(g.checkpoint, g.args, &req, model, g.model, applied, out); f != nil {
			return nil, f
		}
		defer ckpt.wait()
	}
	if g.resume != nil {
		if f := checkResumable(g.resume, model, applied); f != nil {
			return nil, f
		}
		req.Resume = resumeFirstPass(g.resume)
	}
	req.OnStep = ckpt.onStep(1, 0, 0)

	var notices []string
	// run runs one request with its events going to the progress output.
	run := func(req pipeline.Request, pass int, do func(chan<- pipeline.Event) (*pipeline.Result, error)) (*pipeline.Result, error) {
		events := make(chan pipeline.Event)
		drained := make(chan struct{})
		go func() {
			for ev := range events {
				if ev.Notice != "" {
					notices = append(notices, ev.Notice)
				}
				out.progressPass(ev, pass)
			}
			close(drained)
		}()
		res, err := do(events)
		<-drained
		out.endProgress()
		return res, err
	}
	res, err := run(req, 1, func(ev chan<- pipeline.Event) (*pipeline.Result, error) { return p.Run(ctx, req, ev) })
	if err != nil {
		return nil, runFailure(err, outPath)
	}
	results := res.Batch
	if results == nil {
		results = []*pipeline.Result{res}
	}
	ckpt.firstPassDone(results)
	var saved []*savedImage
	batchID := imagefile.NewBatchID(time.Now(), 0, req.Seed) // the history groups a batch's PNGs by it
	for i, first := range results {
		img, err := job.Finish(first)
		if err != nil {
			return saved, &failure{ExitFailure, err}
		}
		settings := d.FileSettings(first)
		settings.Width, settings.Height = img.Rect.Dx(), img.Rect.Dy()
		settings.NegativePrompt = negativeUsed(req.NegativePrompt, first.CFG)
		settings.ModelHash, settings.LoRAs, settings.Backend = modelFingerprint(model), loralib.Refs(applied), backendName
		settings.Idea = g.text.idea
		settings.InBatch(batchID, first.Index, len(results))
		final := first
		if g.batch.hires > 0 {
			hreq, skip := secondPassResume(req, g.resume, ckpt, i, len(results))
			if skip {
				fmt.Fprintf(out.stderr, "easel generate: %s was saved before the run stopped\n", outPaths[i])
				continue
			}
			second, hs, err := secondPassRun(ctx, run, p, hreq, first, img, &g.batch)
			if err != nil {
				return saved, runFailure(err, outPaths[i])
			}
			final, img, settings.Hires = second, second.Image, hs
		}
		saveStart := time.Now()
		if err := imagefile.WriteFile(outPaths[i], img, settings); err != nil {
			return saved, &failure{ExitWrite, err}
		}
		recordLastJob(final, backendName, g.model, notices)
		s := newSavedImage(outPaths[i], final, loaded, time.Since(saveStart), time.Since(loadStart))
		s.Index, s.Images = i, len(results)
		s.VariationSeed = first.VariationSeed
		saved = append(saved, s)
		if f := checkSaved(ctx, g, model, img, s, out); f != nil {
			return saved, f
		}
	}
	if err := ckpt.done(); err != nil {
		fmt.Fprintf(out.stderr, "easel generate: %v\n", err)
	}
	return saved, nil
}

// secondPassRun runs secondPass with its events going to the progress output as pass 2.
func secondPassRun(ctx context.Context, run func(pipeline.Request, int, func(chan<- pipeline.Event) (*pipeline.Result, error)) (*pipeline.Result, error),
	p *pipeline.Pipeline, req pipeline.Request, first *pipeline.Result, img *image.NRGBA, b *batchArgs) (*pipeline.Result, *imagefile.HiresSettings, error) {
	var hs *imagefile.HiresSettings
	res, err := run(req, 2, func(ev chan<- pipeline.Event) (*pipeline.Result, error) {
		r, h, err := secondPass(ctx, p, req, first, img, b, ev)
		hs = h
		return r, err
	})
	return res, hs, err
}

// runFailure sorts a failed run into its exit code.
func runFailure(err error, outPath string) *failure {
	var changed *mmapfile.FaultError
	switch {
	case errors.As(err, &changed):
		return fail(ExitModelChanged, "%v; %s was not written", err, outPath)
	case errors.Is(err, context.Canceled):
		return fail(ExitCancelled, "cancelled; %s was not written", outPath)
	case errors.Is(err, pipeline.ErrSize):
		return &failure{ExitSize, err}
	case errors.Is(err, pipeline.ErrImages):
		return &failure{ExitImage, err}
	case errors.Is(err, pipeline.ErrSettings), errors.Is(err, pipeline.ErrNoise):
		return &failure{ExitSettings, err}
	case errors.Is(err, pipeline.ErrMemory):
		return &failure{ExitMemory, err}
	}
	return &failure{ExitFailure, err}
}

// negativeUsed is the negative prompt as the image records it: only when CFG used it.
func negativeUsed(neg string, cfg float64) string {
	if cfg > 1 {
		return neg
	}
	return ""
}
