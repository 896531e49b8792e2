package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"easel/app/imagefile"
	"easel/app/memplan"
	"easel/app/settings"
	"easel/engine/cmf"
	"easel/engine/condimage"
	"easel/engine/convert"
	"easel/engine/imageio"
	"easel/engine/ml/cpu"
	"easel/engine/pipeline"
)

const benchPipelineUsage = `usage: easel bench pipeline (--model M.cmf | --synthetic) --size WxH --steps N [flags]

  --model M.cmf      the model file to run
  --synthetic        run the full-size synthetic model (random weights, the published shapes and
                     codecs), written once into the user cache folder (Easel/synthetic, ~13 GB)
  --tokenizer FILE   tokenizer.json for writing the synthetic model (default: the tiny reference
                     snapshot's, found from the current folder up: run from the repository)
  --size WxH         output size (default 256x256)
  --steps N          denoising steps (default 1, which runs the fixed sigma grid [0.5])
  --image FILE       a condition image; repeat for more
  --resolution N     the output resolution condition images are sized for (default: the model's)
  --cfg S            true-CFG scale (above 1 runs the negative prompt too)
  --prompt TEXT      the prompt (default: a short one)
  --out FILE.png     where to save the image (default: a temporary file, removed afterwards)
  --predict-only     print the planner's predictions (here, and for a 16 GB Mac) without running
  --json             print one JSON object

Reports each stage's seconds, the resident memory at the end of each stage and its high-water
mark within it (the part that maps the model file shown apart), the process's peak resident set,
and the memory planner's predicted peak for the same request.`

// pipelineStageReport is one stage of a benchmarked run.
type pipelineStageReport struct {
	Name         string  `json:"name"`
	Seconds      float64 `json:"seconds"`
	RSSEndBytes  int64   `json:"rss_end_bytes"`
	RSSMaxBytes  int64   `json:"rss_max_bytes"`
	FileEndBytes int64   `json:"file_rss_end_bytes"` // resident pages of the model file's mapping
	FileMaxBytes int64   `json:"file_rss_max_bytes"`
}

// pipelineReport is `easel bench pipeline --json`.
type pipelineReport struct {
	Backend        string                `json:"backend"`
	Model          string                `json:"model"`
	Synthetic      bool                  `json:"synthetic"`
	Width          int                   `json:"width"`
	Height         int                   `json:"height"`
	Steps          int                   `json:"steps"`
	CFG            float64               `json:"cfg"`
	Images         int                   `json:"images"`
	Stages         map[string]float64    `json:"stages"`
	StageDetail    []pipelineStageReport `json:"stage_detail"`
	PeakRSS        int64                 `json:"peak_rss_bytes"`
	Predicted      int64                 `json:"predicted_peak_bytes"`
	PredictedParts memplan.Prediction    `json:"prediction"`
	PeakRatio      float64               `json:"peak_over_predicted"`
	// Mac16 is the planner's prediction for the same request on a 16 GB Mac with every network on
	// Metal (half K/V, the denoiser's device buffers per program, the other networks' device
	// plans, the GPU working set three quarters of memory).
	Mac16        memplan.Prediction `json:"mac16_prediction"`
	Mac16Fits    bool               `json:"mac16_fits"`
	OutputFinite bool               `json:"output_finite"`
	OutputRMS    float64            `json:"output_rms"`
	Seconds      float64            `json:"total_seconds"`
}

func benchPipeline(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench pipeline", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	model := fs.String("model", "", "")
	synthetic := fs.Bool("synthetic", false, "")
	tokenizerPath := fs.String("tokenizer", "", "")
	size := fs.String("size", "256x256", "")
	steps := fs.Int("steps", 1, "")
	resolution := fs.Int("resolution", 0, "")
	cfg := fs.Float64("cfg", 0, "")
	prompt := fs.String("prompt", "a lighthouse on a cliff at dusk, oil painting", "")
	outPath := fs.String("out", "", "")
	asJSON := fs.Bool("json", false, "")
	predictOnly := fs.Bool("predict-only", false, "")
	var images stringList
	fs.Var(&images, "image", "")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "easel bench pipeline: %v\n\n%s\n", err, benchPipelineUsage)
		return ExitUsage
	}
	if (*model == "") == !*synthetic {
		fmt.Fprintf(stderr, "easel bench pipeline: give --model M.cmf or --synthetic (one of them)\n\n%s\n", benchPipelineUsage)
		return ExitUsage
	}
	w, h, err := parseSize(*size)
	if err != nil {
		fmt.Fprintf(stderr, "easel bench pipeline: %v\n", err)
		return ExitSize
	}
	if *steps < 1 {
		fmt.Fprintln(stderr, "easel bench pipeline: --steps must be at least 1")
		return ExitSettings
	}
	ctx, stop := interruptContext()
	defer stop()
	start := time.Now()
	path := *model
	if *synthetic {
		if path, err = ensureSyntheticModel(ctx, *tokenizerPath, stderr); err != nil {
			fmt.Fprintf(stderr, "easel bench pipeline: %v\n", err)
			return ExitFailure
		}
	}
	req := pipeline.Request{Prompt: *prompt, NegativePrompt: "blurry", Width: w, Height: h, Steps: *steps, CFG: *cfg, Resolution: *resolution, Seed: 42}
	if *steps == 1 {
		// One step takes the fixed grid [0.5], which the scheduler shifts and stretches like any
		// other: one denoiser call at a middle σ, what a memory and timing run needs.
		req.Sigmas = []float64{0.5}
	}
	for _, p := range images {
		img, err := imageio.Load(p)
		if err != nil {
			fmt.Fprintf(stderr, "easel bench pipeline: %v\n", err)
			return ExitImage
		}
		req.Images = append(req.Images, img)
	}
	rep, err := runPipelineBench(ctx, path, req, *outPath, *predictOnly)
	if err != nil {
		fmt.Fprintf(stderr, "easel bench pipeline: %v\n", err)
		if ctx.Err() != nil {
			return ExitCancelled
		}
		return ExitFailure
	}
	rep.Synthetic, rep.Seconds = *synthetic, time.Since(start).Seconds()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return ExitFailure
		}
		return ExitOK
	}
	if *predictOnly {
		fmt.Fprintf(stdout, "predicted peak here %s (while the %s runs); on a 16 GB Mac with the networks on Metal %s (while the %s runs), %s of the %s GPU working set usable: fits %v\n",
			memplan.GB(rep.Predicted), rep.PredictedParts.Largest().Name, memplan.GB(rep.Mac16.Peak), rep.Mac16.Largest().Name,
			memplan.GB(rep.Mac16.Usable()), memplan.GB(mac16WorkingSet), rep.Mac16Fits)
		return ExitOK
	}
	fmt.Fprintf(stdout, "pipeline: %s, %d×%d, %d steps, CFG %g, %d condition images, backend %s\n", rep.Model, rep.Width, rep.Height, rep.Steps, rep.CFG, rep.Images, rep.Backend)
	fmt.Fprintf(stdout, "%-20s %9s %12s %12s %12s %12s\n", "stage", "seconds", "RSS end", "RSS max", "file end", "file max")
	for _, s := range rep.StageDetail {
		fmt.Fprintf(stdout, "%-20s %9.1f %12s %12s %12s %12s\n", s.Name, s.Seconds, memplan.GB(s.RSSEndBytes), memplan.GB(s.RSSMaxBytes), memplan.GB(s.FileEndBytes), memplan.GB(s.FileMaxBytes))
	}
	fmt.Fprintf(stdout, "peak RSS %s, predicted peak %s (measured/predicted %.2f); output finite %v, RMS %.3f\n",
		memplan.GB(rep.PeakRSS), memplan.GB(rep.Predicted), rep.PeakRatio, rep.OutputFinite, rep.OutputRMS)
	fmt.Fprintf(stdout, "a 16 GB Mac (networks on Metal): predicted peak %s while the %s runs, %s of the %s GPU working set usable: fits %v\n",
		memplan.GB(rep.Mac16.Peak), rep.Mac16.Largest().Name, memplan.GB(rep.Mac16.Usable()), memplan.GB(mac16WorkingSet), rep.Mac16Fits)
	return ExitOK
}

// ensureSyntheticModel is the cached synthetic model's path, writing it first when needed.
func ensureSyntheticModel(ctx context.Context, tokenizerPath string, stderr io.Writer) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache folder to keep the synthetic model in: %v", err)
	}
	dir := filepath.Join(cache, "Easel", "synthetic")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "qwen-image-2.1-"+string(convert.ProfileCortiq)+".cmf")
	tok, err := readTokenizer(tokenizerPath)
	if err != nil {
		return "", err
	}
	var last time.Time
	wrote, err := convert.EnsureSynthetic(ctx, path, convert.SyntheticOptions{Tokenizer: tok, Progress: func(p convert.Progress) {
		if time.Since(last) > 5*time.Second {
			last = time.Now()
			fmt.Fprintf(stderr, "writing the synthetic model: %d of %d tensors, %.0f%%, about %v left\n",
				p.TensorsDone, p.TensorsTotal, 100*float64(p.BytesDone)/float64(max(p.BytesTotal, 1)), p.ETA().Round(time.Second))
		}
	}})
	if err != nil {
		return "", err
	}
	if wrote {
		fmt.Fprintf(stderr, "wrote the synthetic model to %s\n", path)
	}
	return path, nil
}

// mac16WorkingSet is a 16 GB Mac's GPU working set as memplan estimates it (three quarters of
// unified memory, Metal's recommendedMaxWorkingSetSize on such machines).
const mac16WorkingSet = 16 << 30 / 4 * 3

// benchPlan is the memory plan of a request, its condition images sized for resolution res.
func benchPlan(req pipeline.Request, res int) (memplan.Plan, error) {
	plan := memplan.Plan{Width: req.Width, Height: req.Height, PromptBytes: len(req.Prompt), CFG: req.CFG > 1, Init: req.Init != nil}
	for _, img := range req.Images {
		cw, ch, err := condimage.ConditionSize(img.Rect.Dx(), img.Rect.Dy(), res)
		if err != nil {
			return memplan.Plan{}, err
		}
		plan.Conditions = append(plan.Conditions, [2]int{cw, ch})
	}
	return plan, nil
}

// mac16Prediction is the planner's prediction for a plan on a 16 GB Mac with every network on
// Metal: the denoiser's device buffers per program, the text encoder's, vision tower's and VAE's
// device plans, one network resident at a time.
func mac16Prediction(g memplan.Geometry, plan memplan.Plan) memplan.Prediction {
	plan.Metal = true
	return memplan.Predict(g, plan, mac16WorkingSet)
}

// referenceTokenizer is where the repository keeps the real Qwen tokenizer.
const referenceTokenizer = "testdata/golden/tiny-qwen-image-2.1/processor/tokenizer.json"

// readTokenizer reads the given tokenizer.json, or finds the repository's from the current folder
// up.
func readTokenizer(path string) ([]byte, error) {
	if path != "" {
		return os.ReadFile(path)
	}
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, referenceTokenizer))
		if err == nil {
			return b, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, errors.New("the synthetic model needs Qwen's tokenizer.json: run from the Easel repository (it has " + referenceTokenizer + ") or pass --tokenizer FILE")
		}
		dir = parent
	}
}

// residentSampler records the resident set while a run goes on, by stage.
type residentSampler struct {
	mu     sync.Mutex
	stage  string
	order  []string
	detail map[string]*pipelineStageReport
	stop   chan struct{}
	done   chan struct{}
}

func newResidentSampler(first string) *residentSampler {
	s := &residentSampler{detail: map[string]*pipelineStageReport{}, stop: make(chan struct{}), done: make(chan struct{})}
	s.enter(first)
	go func() {
		defer close(s.done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.sample()
			}
		}
	}()
	return s
}

// enter starts a stage (sampling the end of the previous one).
func (s *residentSampler) enter(stage string) {
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.detail[stage] == nil {
		s.detail[stage] = &pipelineStageReport{Name: stage}
		s.order = append(s.order, stage)
	}
	s.stage = stage
}

func (s *residentSampler) sample() {
	total, file := memplan.Resident()
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.detail[s.stage]
	if d == nil {
		return
	}
	d.RSSEndBytes, d.FileEndBytes = total, file
	d.RSSMaxBytes, d.FileMaxBytes = max(d.RSSMaxBytes, total), max(d.FileMaxBytes, file)
}

func (s *residentSampler) finish() []pipelineStageReport {
	s.sample()
	close(s.stop)
	<-s.done
	out := make([]pipelineStageReport, len(s.order))
	for i, n := range s.order {
		out[i] = *s.detail[n]
	}
	return out
}

// runPipelineBench loads the model, runs one request as the app does and saves the image,
// measuring each stage.
func runPipelineBench(ctx context.Context, path string, req pipeline.Request, outPath string, predictOnly bool) (*pipelineReport, error) {
	sampler := newResidentSampler("load")
	t0 := time.Now()
	f, err := cmf.Open(path)
	if err != nil {
		sampler.finish()
		return nil, err
	}
	defer f.Close()
	be := cpu.New()
	p, err := pipeline.New(f, be, pipeline.Options{})
	if err != nil {
		sampler.finish()
		return nil, err
	}
	defer p.Close()
	stages := map[string]float64{"load": time.Since(t0).Seconds()}

	geom, err := memplan.GeometryOf(path)
	if err != nil {
		sampler.finish()
		return nil, err
	}
	res := req.Resolution
	if res == 0 {
		res = p.Defaults().OutputResolution
	}
	plan, err := benchPlan(req, res)
	if err != nil {
		sampler.finish()
		return nil, err
	}
	pred := memplan.Predict(geom, plan, memplan.DeviceBudget(settings.BackendCPU))
	mac := mac16Prediction(geom, plan)
	if predictOnly {
		sampler.finish()
		return &pipelineReport{Backend: be.Name(), Model: path, Width: req.Width, Height: req.Height, Steps: req.Steps, CFG: req.CFG,
			Images: len(req.Images), Predicted: pred.Peak, PredictedParts: pred, Mac16: mac, Mac16Fits: mac.Fits()}, nil
	}

	events := make(chan pipeline.Event, 64)
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for ev := range events {
			if ev.Notice == "" && ev.Step == 0 && ev.Stage != pipeline.StageDone {
				sampler.enter(ev.Stage.String())
			}
		}
	}()
	result, err := p.Run(ctx, req, events)
	<-consumed
	if err != nil {
		sampler.finish()
		return nil, err
	}
	sampler.enter("save")
	t1 := time.Now()
	if outPath == "" {
		dir, err := os.MkdirTemp("", "easel-bench-")
		if err != nil {
			sampler.finish()
			return nil, err
		}
		defer os.RemoveAll(dir)
		outPath = filepath.Join(dir, "bench.png")
	}
	if err := imagefile.WriteFile(outPath, result.Image, &imagefile.Settings{Prompt: req.Prompt, Width: result.Width, Height: result.Height, Steps: result.Steps, CFG: result.CFG, Seed: result.Seed}); err != nil {
		sampler.finish()
		return nil, err
	}
	stages["save"] = time.Since(t1).Seconds()
	detail := sampler.finish()
	for s := pipeline.Stage(0); s < pipeline.StageDone; s++ {
		if d := result.StageTimes[s]; d > 0 {
			stages[s.String()] = d.Seconds()
		}
	}
	// The kernel's high-water mark (getrusage) and /proc's VmRSS read the same counters at
	// different moments and can disagree by a few pages; the peak is the higher of every reading.
	peak := memplan.PeakResident()
	for i := range detail {
		detail[i].Seconds = stages[detail[i].Name]
		peak = max(peak, detail[i].RSSMaxBytes)
	}
	rep := &pipelineReport{
		Backend: be.Name(), Model: path, Width: result.Width, Height: result.Height, Steps: result.Steps, CFG: result.CFG,
		Images: len(req.Images), Stages: stages, StageDetail: detail, PeakRSS: peak,
		Predicted: pred.Peak, PredictedParts: pred, Mac16: mac, Mac16Fits: mac.Fits(),
	}
	if pred.Peak > 0 {
		rep.PeakRatio = float64(rep.PeakRSS) / float64(pred.Peak)
	}
	rep.OutputFinite, rep.OutputRMS = finiteRMS(result.Decoded.Pix)
	return rep, nil
}

// finiteRMS reports whether every value is finite, and their root mean square.
func finiteRMS(v []float32) (bool, float64) {
	var ss float64
	for _, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false, 0
		}
		ss += f * f
	}
	if len(v) == 0 {
		return true, 0
	}
	return true, math.Sqrt(ss / float64(len(v)))
}
