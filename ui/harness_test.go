package ui

import (
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"easel/app/desktop"
	"easel/app/history"
	"easel/app/memplan"
	"easel/app/preview"
	"easel/app/settings"
	"easel/engine/ml"
	"easel/engine/pipeline"
)

// harness is a main window on the test driver whose UI calls (fyne.Do) are collected and run on
// the test goroutine by pump, so tests see a consistent UI without sleeping.
type harness struct {
	t     *testing.T
	w     fyne.Window
	s     *window
	gen   *scriptedGen
	calls chan func()
	dir   string
	// ran receives the desktop commands (reveal, copy) the window runs; none really run.
	ran chan desktop.Command
	// patience is how long pump waits before failing (20 s when 0); tests that run the real
	// tiny model wait longer, as a run takes minutes on a loaded machine.
	patience time.Duration
	// closed is set once the window is closed (closeWindow).
	closed bool
}

func newHarness(t *testing.T, budget int64) *harness {
	t.Helper()
	return newHarnessWith(t, budget, nil)
}

// newHarnessWith lets a test adjust the services (and use the harness's temporary folder) before
// the window opens.
func newHarnessWith(t *testing.T, budget int64, adjust func(h *harness, d *Deps)) *harness {
	t.Helper()
	a := test.NewTempApp(t)
	h := &harness{t: t, gen: newScriptedGen(), calls: make(chan func(), 4096), dir: t.TempDir(), ran: make(chan desktop.Command, 16)}
	set := settings.Defaults()
	set.OutputFolder = filepath.Join(h.dir, "out")
	proj, err := preview.Load(preview.TinyFile)
	if err != nil {
		t.Fatal(err)
	}
	deps := Deps{
		Settings: set, Generator: h.gen, Geometry: memplan.PublishedGeometry(), Budget: budget,
		History: history.New(set.OutputFolder), Projection: proj,
		Do: func(f func()) { h.calls <- f },
		// A Linux desktop with xclip and no xdg-open.
		Desktop: &desktop.Opener{GOOS: "linux",
			LookPath: func(name string) (string, error) {
				if name == "xclip" {
					return "/usr/bin/xclip", nil
				}
				return "", os.ErrNotExist
			},
			Run: func(c desktop.Command, _ bool) error { h.ran <- c; return nil }},
		Now: func() time.Time { return time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC) },
	}
	if adjust != nil {
		adjust(h, &deps)
	}
	h.w, h.s = newMainWindow(a, deps)
	h.w.Resize(fyne.NewSize(1400, 860))
	t.Cleanup(h.closeWindow)
	return h
}

// closeWindow closes the window once, running UI calls while it closes (the queue waits for its
// worker, and the window for the images being written).
func (h *harness) closeWindow() {
	if h.closed {
		return
	}
	h.closed = true
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-h.calls:
			case <-done:
				return
			}
		}
	}()
	h.w.Close()
	close(done)
}

// pump runs collected UI calls until cond holds; it fails after a generous deadline instead of
// hanging (a deadline, not a synchronisation sleep).
func (h *harness) pump(what string, cond func() bool) {
	h.t.Helper()
	patience := h.patience
	if patience == 0 {
		patience = 20 * time.Second
	}
	deadline := time.After(patience)
	for !cond() {
		select {
		case f := <-h.calls:
			f()
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// pumpUntil runs the window's calls until ch delivers a value, and returns it: unlike pump, it
// wakes on the value itself, so an answer that comes after the window's last call is not missed.
func pumpUntil[T any](h *harness, what string, ch <-chan T) T {
	h.t.Helper()
	patience := h.patience
	if patience == 0 {
		patience = 20 * time.Second
	}
	deadline := time.After(patience)
	for {
		select {
		case v := <-ch:
			return v
		case f := <-h.calls:
			f()
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// writePNG writes a w×h PNG (a gradient with some transparency) and returns its path.
func (h *harness) writePNG(name string, w, hgt int) string {
	h.t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, hgt))
	for y := range hgt {
		for x := range w {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x * 255 / w), uint8(y * 255 / hgt), 128, uint8(128 + x*127/w)})
		}
	}
	path := filepath.Join(h.dir, name)
	f, err := os.Create(path)
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		h.t.Fatal(err)
	}
	return path
}

// scriptedGen is a fake generator: each run sends the stages, then denoising steps one at a
// time as the test allows them (step), then finishes when released; cancellation ends it.
type scriptedGen struct {
	started chan pipeline.Request
	step    chan struct{}
	release chan struct{}
}

func newScriptedGen() *scriptedGen {
	return &scriptedGen{started: make(chan pipeline.Request, 8), step: make(chan struct{}, 64), release: make(chan struct{}, 8)}
}

const fakeSteps = 4

func (g *scriptedGen) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	defer close(events)
	g.started <- req
	if req.Count > 1 {
		return g.runBatch(ctx, req, events)
	}
	mem := pipeline.Memory{
		Weights:      []pipeline.ComponentBytes{{Name: "dit", Bytes: 4e9}, {Name: "te", Bytes: 8e9}, {Name: "vae", Bytes: 5e8}},
		PrefixKV:     []int64{2e8},
		Activations:  8e8,
		PeakRSS:      13e9,
		DeviceBudget: 24e9,
	}
	var timings [ml.NumClasses]ml.ClassTime
	for _, st := range []pipeline.Stage{pipeline.StageEncodingPrompt, pipeline.StageEncodingImages, pipeline.StagePrefill} {
		events <- pipeline.Event{Stage: st, Steps: fakeSteps, Memory: mem}
	}
	h, w := req.Height/16, req.Width/16
	for i := 1; i <= fakeSteps; i++ {
		select {
		case <-g.step:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		timings[ml.ClassGemm].Time += 3 * time.Second
		timings[ml.ClassAttn].Time += time.Second
		x0 := make([]float32, h*w*preview.Channels)
		for j := range x0 {
			x0[j] = float32(j%7) - 3
		}
		ev := pipeline.Event{Stage: pipeline.StageDenoising, Step: i, Steps: fakeSteps, StepTime: 2 * time.Second,
			ETA: time.Duration(fakeSteps-i+1) * 2 * time.Second, Elapsed: time.Duration(i) * 2 * time.Second,
			Timings: timings, Memory: mem,
			Preview: &pipeline.Preview{X0: x0, H: h, W: w}}
		if req.Preview != nil {
			ev.Preview.Image = req.Preview(x0, h, w)
		}
		if req.SharpPreview {
			// A real decode of step 2 arrives with step 3; one decode of 0.1 s, every 2 steps.
			ev.Sharp = &pipeline.SharpStats{Every: 2, Downsample: 4}
			if i >= 3 {
				ev.Sharp.Decodes, ev.Sharp.Time, ev.Sharp.Last = 1, 100*time.Millisecond, 100*time.Millisecond
			}
			if i == 3 {
				ev.Preview.Sharp = &pipeline.SharpImage{Image: image.NewNRGBA(image.Rect(0, 0, req.Width/4, req.Height/4)), Step: 2, Downsample: 4}
			}
		}
		events <- ev
	}
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	events <- pipeline.Event{Stage: pipeline.StageDecoding, Steps: fakeSteps, Memory: mem, Timings: timings}
	img := image.NewNRGBA(image.Rect(0, 0, req.Width, req.Height))
	for i := range img.Pix {
		img.Pix[i] = uint8(i % 251)
	}
	return &pipeline.Result{Image: img, Width: req.Width, Height: req.Height, Steps: fakeSteps, CFG: req.CFG, Seed: req.Seed, Timings: timings}, nil
}

// runBatch is Run for a batch: one prefill, then for each image fakeSteps steps (as the test
// allows them) with the image's index and seed, and its finished result; no release needed.
func (g *scriptedGen) runBatch(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	n := req.Batch()
	events <- pipeline.Event{Stage: pipeline.StagePrefill, Steps: fakeSteps, Images: n}
	h, w := req.Height/16, req.Width/16
	var results []*pipeline.Result
	for i := range n {
		seed, v := req.ImageSeeds(i)
		for st := 1; st <= fakeSteps; st++ {
			select {
			case <-g.step:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			x0 := make([]float32, h*w*preview.Channels)
			ev := pipeline.Event{Stage: pipeline.StageDenoising, Step: st, Steps: fakeSteps, StepTime: time.Second, Image: i, Images: n, Seed: seed, VariationSeed: v,
				Preview: &pipeline.Preview{X0: x0, H: h, W: w}}
			if req.Preview != nil {
				ev.Preview.Image = req.Preview(x0, h, w)
			}
			events <- ev
		}
		img := image.NewNRGBA(image.Rect(0, 0, req.Width, req.Height))
		for j := range img.Pix {
			img.Pix[j] = uint8(j*(i+1)) | 3
		}
		res := &pipeline.Result{Image: img, Width: req.Width, Height: req.Height, Steps: fakeSteps, CFG: req.CFG, Seed: seed, Index: i}
		if req.VariationStrength > 0 {
			res.VariationSeed, res.VariationStrength = v, req.VariationStrength
		}
		results = append(results, res)
		events <- pipeline.Event{Stage: pipeline.StageDecoding, Steps: fakeSteps, Image: i, Images: n, Seed: seed, Finished: res}
	}
	results[0].Batch = results
	return results[0], nil
}
