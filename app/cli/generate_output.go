package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"easel/app/backend"
	"easel/app/imagefile"
	"easel/engine/ml"
	"easel/engine/pipeline"
)

// savedImage is what generate reports on success.
type savedImage struct {
	Path          string             `json:"path"`
	Index, Images int                `json:"-"` // the image's place in its batch (0-based) and the batch's size
	VariationSeed uint64             `json:"-"`
	Width, Height int                `json:"-"`
	Seed          uint64             `json:"seed"`
	NoiseSeed     *uint64            `json:"-"`
	Elapsed       time.Duration      `json:"-"`
	StageTimes    map[string]float64 `json:"stage_s"`
	// StageDeviceTimes is each stage's Metal GPU time (empty on the CPU backend).
	StageDeviceTimes map[string]float64 `json:"stage_device_s,omitempty"`
	// Cell is a grid cell's axis values (nil outside a grid).
	Cell map[string]string `json:"-"`
}

// newSavedImage is the report of a run saved to path: the stage times (with loading the model
// and saving) and the Metal device's per stage.
func newSavedImage(path string, res *pipeline.Result, loading, saving, elapsed time.Duration) *savedImage {
	stages := map[string]float64{"loading model": loading.Seconds(), "saving": saving.Seconds()}
	for s, d := range res.StageTimes {
		if d > 0 {
			stages[pipeline.Stage(s).String()] = d.Seconds()
		}
	}
	var device map[string]float64
	for s, d := range res.StageDeviceTimes {
		if d > 0 {
			if device == nil {
				device = map[string]float64{}
			}
			device[pipeline.Stage(s).String()] = d.Seconds()
		}
	}
	return &savedImage{Path: path, Width: res.Width, Height: res.Height, Seed: res.Seed, NoiseSeed: res.NoiseSeed, Elapsed: elapsed, StageTimes: stages, StageDeviceTimes: device}
}

// generateOutput prints progress (a terminal line, JSON lines, or nothing) and the outcome.
type generateOutput struct {
	json, verbose  bool
	stdout, stderr io.Writer
	terminal       *os.File // stderr when it is a terminal
	enc            *json.Encoder
	// cellValues, during a grid, names cell i's axis values for the events (generate_grid.go).
	cellValues func(i int) map[string]string
}

func newGenerateOutput(asJSON bool, stdout, stderr io.Writer) *generateOutput {
	// The first-use tuning reports from the pipeline's goroutine while the events' goroutine
	// prints progress: each write is whole.
	stdout, stderr = &lockedWriter{w: stdout}, &lockedWriter{w: stderr}
	o := &generateOutput{json: asJSON, stdout: stdout, stderr: stderr, enc: json.NewEncoder(stdout)}
	o.enc.SetEscapeHTML(false)
	if f, ok := stderr.(*lockedWriter).w.(*os.File); ok && !asJSON {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			o.terminal = f
		}
	}
	return o
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// jsonEvent is one --json line.
type jsonEvent struct {
	Stage          string                   `json:"stage"`
	Step           int                      `json:"step,omitempty"`
	Steps          int                      `json:"steps,omitempty"`
	Sigma          float32                  `json:"sigma,omitempty"`
	Elapsed        float64                  `json:"elapsed_s"`
	SecondsPerStep float64                  `json:"s_per_step,omitempty"`
	LastStep       float64                  `json:"last_step_s,omitempty"`
	ETA            float64                  `json:"eta_s,omitempty"`
	Timings        map[string]jsonClassTime `json:"timings,omitempty"`
	DeviceSeconds  float64                  `json:"device_s,omitempty"`
	Memory         *jsonMemory              `json:"memory,omitempty"`
	Path           string                   `json:"path,omitempty"`
	Seed           *uint64                  `json:"seed,omitempty"`
	NoiseSeed      *uint64                  `json:"noise_seed,omitempty"` // when the noise is not the seed's (an edit of the seed's own image)
	Image          *int                     `json:"image,omitempty"`      // the batch's image (1-based), in a batch of Images
	Images         int                      `json:"images,omitempty"`     // the batch's size, when above 1
	VariationSeed  uint64                   `json:"variation_seed,omitempty"`
	Pass           int                      `json:"pass,omitempty"` // 2 for the --hires pass
	StageTimes     map[string]float64       `json:"stage_s,omitempty"`
	StageDevice    map[string]float64       `json:"stage_device_s,omitempty"`
	Backend        string                   `json:"backend,omitempty"`
	Notice         string                   `json:"notice,omitempty"`
	Recovery       *pipeline.Recovery       `json:"recovery,omitempty"` // on a notice of a device's recovery during the run
	Error          string                   `json:"error,omitempty"`
	ExitCode       int                      `json:"exit_code,omitempty"`
	Cell           map[string]string        `json:"cell,omitempty"` // a grid cell's axis values
	Grid           *imagefile.GridSettings  `json:"grid,omitempty"` // a grid image's axes
}

type jsonClassTime struct {
	Seconds float64 `json:"s"`
	Ops     int     `json:"ops"`
}

type jsonMemory struct {
	Weights      map[string]int64 `json:"weights_bytes"`
	PrefixKV     []int64          `json:"prefix_kv_bytes,omitempty"`
	Activations  int64            `json:"activations_estimate_bytes,omitempty"`
	PeakRSS      int64            `json:"peak_rss_bytes,omitempty"`
	GoHeap       int64            `json:"go_heap_bytes"`
	DeviceBudget int64            `json:"device_budget_bytes,omitempty"`
}

func (o *generateOutput) progress(ev pipeline.Event) { o.progressPass(ev, 1) }

// progressPass reports an event of the first pass or of the --hires pass (2).
func (o *generateOutput) progressPass(ev pipeline.Event, pass int) {
	if ev.Notice != "" {
		o.notice(ev)
		return
	}
	switch {
	case o.json:
		je := jsonEvent{Stage: ev.Stage.String(), Step: ev.Step, Steps: ev.Steps, Sigma: ev.Sigma, Elapsed: ev.Elapsed.Seconds(),
			SecondsPerStep: ev.StepTime.Seconds(), LastStep: ev.LastStepTime.Seconds(), ETA: ev.ETA.Seconds(), Timings: map[string]jsonClassTime{},
			DeviceSeconds: ev.DeviceTime.Seconds(), Seed: &ev.Seed, VariationSeed: ev.VariationSeed, NoiseSeed: ev.NoiseSeed}
		if ev.Images > 1 {
			n := ev.Image + 1
			je.Image, je.Images = &n, ev.Images
		}
		if pass > 1 {
			je.Pass = pass
		}
		if o.cellValues != nil {
			je.Cell = o.cellValues(ev.Image)
		}
		for c, t := range ev.Timings {
			if t.Ops > 0 {
				je.Timings[ml.Class(c).String()] = jsonClassTime{t.Time.Seconds(), t.Ops}
			}
		}
		m := ev.Memory
		jm := &jsonMemory{Weights: map[string]int64{}, PrefixKV: m.PrefixKV, Activations: m.Activations, PeakRSS: m.PeakRSS, GoHeap: m.GoHeap, DeviceBudget: m.DeviceBudget}
		for _, w := range m.Weights {
			jm.Weights[w.Name] = w.Bytes
		}
		je.Memory = jm
		o.enc.Encode(je)
	case o.terminal != nil:
		if ev.Stage == pipeline.StageDone {
			return
		}
		line := ev.Stage.String() + "…"
		if ev.Step > 0 {
			line = fmt.Sprintf("step %d/%d · %.2f s/step · ETA %s", ev.Step, ev.Steps, ev.StepTime.Seconds(), roundETA(ev.ETA))
		}
		if ev.Images > 1 {
			line = fmt.Sprintf("image %d/%d (seed %d) · %s", ev.Image+1, ev.Images, ev.Seed, line)
		}
		if pass > 1 {
			line = "second pass · " + line
		}
		fmt.Fprintf(o.terminal, "\r%s\033[K", line)
	}
}

// notice reports a sentence about where the denoiser runs: a --json "notice" event, else a line
// on stderr (always, since a decline changes what the run costs).
func (o *generateOutput) notice(ev pipeline.Event) {
	if o.json {
		o.enc.Encode(jsonEvent{Stage: "notice", Notice: ev.Notice, Recovery: ev.Recovery, Elapsed: ev.Elapsed.Seconds()})
		return
	}
	o.endProgress()
	fmt.Fprintf(o.stderr, "easel generate: %s\n", ev.Notice)
}

// backendChosen reports the backend choice: a --json "backend" event, or with --verbose a line
// on stderr.
func (o *generateOutput) backendChosen(c *backend.Choice) {
	switch {
	case o.json:
		o.enc.Encode(jsonEvent{Stage: "backend", Backend: c.Name(), Notice: c.Reason})
	case o.verbose:
		fmt.Fprintf(o.stderr, "easel generate: backend %s: %s\n", c.Asked, c.Reason)
	}
}

// roundETA keeps an ETA readable: tenths of a second below ten seconds, whole seconds above.
func roundETA(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

func (o *generateOutput) endProgress() {
	if o.terminal != nil {
		fmt.Fprint(o.terminal, "\r\033[K")
	}
}

func (o *generateOutput) failed(f *failure) {
	fmt.Fprintf(o.stderr, "easel generate: %v\n", f.err)
	if o.json {
		o.enc.Encode(jsonEvent{Stage: "failed", Error: f.err.Error(), ExitCode: f.code})
	}
}

func (o *generateOutput) saved(s *savedImage) {
	if o.json {
		je := jsonEvent{Stage: "saved", Path: s.Path, Seed: &s.Seed, NoiseSeed: s.NoiseSeed, VariationSeed: s.VariationSeed, Elapsed: s.Elapsed.Seconds(), StageTimes: s.StageTimes, StageDevice: s.StageDeviceTimes}
		if s.Images > 1 {
			n := s.Index + 1
			je.Image, je.Images = &n, s.Images
		}
		je.Cell = s.Cell
		o.enc.Encode(je)
		return
	}
	fmt.Fprintf(o.stdout, "%s: %d×%d, seed %d, %.1f s\n", s.Path, s.Width, s.Height, s.Seed, s.Elapsed.Seconds())
}

// gridSaved reports a grid image written: a --json "grid" event with its axes, else a line.
func (o *generateOutput) gridSaved(path string, g *imagefile.GridSettings) {
	if o.json {
		o.enc.Encode(jsonEvent{Stage: "grid", Path: path, Grid: g})
		return
	}
	fmt.Fprintf(o.stdout, "%s: the grid\n", path)
}
