package pipeline

import (
	"context"
	"strings"
	"testing"

	"easel/engine/cmf"
	"easel/engine/qi21"
)

// recoveringDenoiser is the CPU denoiser whose placement reports a recovery of kind on every
// step, as a device that recovers each time would.
type recoveringDenoiser struct {
	Denoiser
	s    Site
	kind RecoveryKind
}

func (d recoveringDenoiser) Step(ctx context.Context, p Program, x []float32, sigma float32) ([]float32, error) {
	d.s.Recovered(Recovery{Kind: d.kind, Device: "Test", Call: "a step", What: "something went wrong and was fixed", Means: "the image is unaffected"})
	return d.Denoiser.Step(ctx, p, x, sigma)
}

// TestRecoveriesAreToldOncePerKindPerRun: a placement that recovers at every step (twice per step
// under CFG) gives one notice event per run, placed at the first step, with its record; the
// result counts every occurrence; the next run tells it again; the image is the plain CPU run's.
func TestRecoveriesAreToldOncePerKindPerRun(t *testing.T) {
	req := behaviourRequest(t, 0)
	req.Width, req.Height = 64, 64
	plain, err := q8Pipeline(t, nil).Run(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := q8Pipeline(t, func(*cmf.File) Options {
		return Options{Denoiser: func(s Site, m *qi21.Model) (Denoiser, Placement, error) {
			return recoveringDenoiser{Denoiser: CPUDenoiser(m), s: s, kind: RecoveryTimeout}, Placement{}, nil
		}}
	})
	for run := 1; run <= 2; run++ {
		events := make(chan Event, 256)
		res, err := p.Run(t.Context(), req, events)
		if err != nil {
			t.Fatal(err)
		}
		var told []Event
		for ev := range events {
			if ev.Recovery != nil {
				told = append(told, ev)
			}
		}
		steps := res.StepsRun
		if len(told) != 1 || told[0].Notice != told[0].Recovery.Notice || told[0].Recovery.Network != "the denoiser" {
			t.Fatalf("run %d: %d recovery notices, want 1 from the denoiser", run, len(told))
		}
		want := "Step 1 of 3 on Test: something went wrong and was fixed; the image is unaffected."
		if steps != 3 || told[0].Notice != want {
			t.Errorf("run %d: notice %q, want %q", run, told[0].Notice, want)
		}
		if len(res.Recoveries) != 1 || res.Recoveries[0].Count != 2*steps || !strings.Contains(res.Recoveries[0].Notice, "Step 1 of") {
			t.Errorf("run %d: Result.Recoveries %+v, want one counted %d times (every step, both prompts)", run, res.Recoveries, 2*steps)
		}
		if res.Image.Bounds() != plain.Image.Bounds() || string(res.Image.Pix) != string(plain.Image.Pix) {
			t.Errorf("run %d: the image differs from the plain CPU run's", run)
		}
	}
}
