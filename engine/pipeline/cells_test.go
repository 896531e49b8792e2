package pipeline

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"easel/engine/cmf"
	"easel/engine/ml/cpu"
	"easel/engine/qi21"
)

// countingDenoiser counts prefills and calls before each step (on the run's goroutine).
type countingDenoiser struct {
	Denoiser
	prefills   atomic.Int32
	steps      atomic.Int32
	beforeStep func(n int32)
}

func (d *countingDenoiser) Prefill(ctx context.Context, lay *qi21.Layout, text, cond []float32) (Program, error) {
	d.prefills.Add(1)
	return d.Denoiser.Prefill(ctx, lay, text, cond)
}

func (d *countingDenoiser) Step(ctx context.Context, prog Program, x []float32, sigma float32) ([]float32, error) {
	n := d.steps.Add(1)
	if d.beforeStep != nil {
		d.beforeStep(n)
	}
	return d.Denoiser.Step(ctx, prog, x, sigma)
}

// newCountingPipeline is the tiny model on the CPU with its denoiser counted.
func newCountingPipeline(t testing.TB) (*Pipeline, *countingDenoiser) {
	t.Helper()
	f, err := cmf.Open(tinyModel(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	d := &countingDenoiser{}
	p, err := New(f, cpu.New(), Options{Denoiser: func(s Site, m *qi21.Model) (Denoiser, Placement, error) {
		d.Denoiser = CPUDenoiser(m)
		return d, Placement{}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return p, d
}

// checkCellsAreSingleRuns runs cells of req and checks each against its single run, and that
// the grid prefilled as many programs as one run of the cells' guidance does.
func checkCellsAreSingleRuns(t *testing.T, p *Pipeline, d *countingDenoiser, req Request, cells []Cell, wantPrefills int32) {
	t.Helper()
	d.prefills.Store(0)
	events := make(chan Event, 4096)
	var finished []int
	drained := make(chan struct{})
	go func() {
		for ev := range events {
			if ev.Finished != nil {
				finished = append(finished, ev.Image)
			}
		}
		close(drained)
	}()
	withCells := req
	withCells.Cells = cells
	res, err := p.Run(t.Context(), withCells, events) // Request.Cells runs RunCells
	<-drained
	if err != nil {
		t.Fatal(err)
	}
	got := res.Batch
	if n := d.prefills.Load(); n != wantPrefills {
		t.Errorf("%d cells prefilled %d programs, want %d", len(cells), n, wantPrefills)
	}
	if len(got) != len(cells) || len(finished) != len(cells) {
		t.Fatalf("%d results and %d finished events for %d cells", len(got), len(finished), len(cells))
	}
	for i, c := range cells {
		want, err := p.Run(t.Context(), c.request(req), nil)
		if err != nil {
			t.Fatal(err)
		}
		g := got[i]
		if g.Index != i || g.Seed != want.Seed || g.Steps != want.Steps || g.StepsRun != want.StepsRun || g.CFG != want.CFG || g.Strength != want.Strength {
			t.Errorf("cell %d: settings %+v, the single run's %+v", i, *g, *want)
		}
		if !slices.Equal(g.Latents, want.Latents) || !slices.Equal(g.Image.Pix, want.Image.Pix) {
			t.Errorf("cell %d %+v differs from its single run", i, c)
		}
	}
}

// A 2×2 grid over seed and steps: one prefill, each cell its single run bit for bit.
func TestCellsSeedAndSteps(t *testing.T) {
	p, d := newCountingPipeline(t)
	req := Request{Prompt: "a lighthouse on a cliff", Width: 64, Height: 64, Steps: 4, CFG: 1}
	checkCellsAreSingleRuns(t, p, d, req, []Cell{{Seed: 1, Steps: 2}, {Seed: 2, Steps: 2}, {Seed: 1, Steps: 3}, {Seed: 2, Steps: 3}}, 1)
}

// CFG per cell (off and on: both programs prefilled once), a start image's strength per cell and
// variation strengths, over a condition image.
func TestCellsCFGStrengthVariation(t *testing.T) {
	p, d := newCountingPipeline(t)
	req := initRequest(1)
	req.Steps = 4
	req.Images = append(req.Images, initTestImage())
	req.Init = &InitImage{Image: initTestImage(), Strength: 0.5}
	checkCellsAreSingleRuns(t, p, d, req, []Cell{
		{Seed: 3, CFG: 1}, {Seed: 3, CFG: 2.5, Strength: 0.75}, {Seed: 3, CFG: 1, Strength: 1},
		{Seed: 3, VariationSeed: 9, VariationStrength: 0.3},
	}, 2)
}

// Cancelling part-way returns the cells finished before it, each its single run.
func TestCellsCancelKeepsFinished(t *testing.T) {
	p, d := newCountingPipeline(t)
	req := Request{Prompt: "a lighthouse on a cliff", Width: 64, Height: 64, Steps: 2, CFG: 1}
	cells := []Cell{{Seed: 1}, {Seed: 2}, {Seed: 3}, {Seed: 4}}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	d.beforeStep = func(n int32) {
		if n == 5 { // the first step of the third cell
			cancel()
		}
	}
	got, err := p.RunCells(ctx, req, cells, nil)
	d.beforeStep = nil
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want a cancellation", err)
	}
	if len(got) != 2 {
		t.Fatalf("%d cells kept, want the 2 finished before the cancel", len(got))
	}
	for i, g := range got {
		want, err := p.Run(t.Context(), cells[i].request(req), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(g.Image.Pix, want.Image.Pix) {
			t.Errorf("kept cell %d differs from its single run", i)
		}
	}
}
