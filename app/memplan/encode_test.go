package memplan

import (
	"testing"

	"easel/engine/vae"
	"easel/engine/vae/vaemetal"
)

// A 2048² start image (a second pass at the model's largest size) is planned as the pipeline
// encodes it: its one-piece encode does not fit a quarter of a 16 GB machine's memory, so it is
// counted in the tiles vae.ChooseEncodeTilingFor picks there, far under the one-piece figure, on
// the CPU and on Metal. The figures go to docs/BENCHMARKS.md ("VAE"):
// go test ./app/memplan -run TestA2048StartImageIsPlannedTiled -v
func TestA2048StartImageIsPlannedTiled(t *testing.T) {
	g := PublishedGeometry()
	cfg := vae.PublishedConfig()
	const side = 2048
	whole, err := vae.PlanEncodeFor(cfg, side, side)
	if err != nil {
		t.Fatal(err)
	}
	wholeDevice, err := vaemetal.PlanEncodeFor(cfg, side, side, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name          string
		metal         bool
		budget, share int64 // the budget Predict gets, and the VAE's share of it
		oneHeap       int64 // the one-piece working set (with the Go heap's headroom on the CPU)
	}{
		{"CPU, 16 GB", false, 16 << 30, 4, heapHeadroom * whole.PeakActivationBytes},
		{"CPU, 24 GB", false, 24 << 30, 4, heapHeadroom * whole.PeakActivationBytes},
		{"Metal, 16 GB Mac", true, mac16WorkingSet, 3, wholeDevice},
	} {
		t.Run(c.name, func(t *testing.T) {
			tiling, plan, err := vae.ChooseEncodeTilingFor(cfg, side, side, c.budget/c.share)
			if err != nil {
				t.Fatal(err)
			}
			if tiling == nil {
				t.Fatalf("a %d² encode (%d bytes in one piece) fits %d bytes: the test needs a budget it does not", side, whole.PeakActivationBytes, c.budget/c.share)
			}
			want := heapHeadroom * plan.PeakActivationBytes
			if c.metal {
				if want, err = vaemetal.PlanEncodeFor(cfg, side, side, tiling); err != nil {
					t.Fatal(err)
				}
			}
			p := Predict(g, Plan{Width: side, Height: side, PromptBytes: 100, Init: true, Metal: c.metal}, c.budget)
			var enc Stage
			for _, s := range p.Stages {
				if s.Name == "VAE encoder" {
					enc = s
				}
			}
			t.Logf("2048² start image, VAE-encoder stage: one piece %s working (%s with the VAE's weights) → %d² tiles (overlap %d) %s working (%s); the run's peak stage: %s, %s",
				GB(c.oneHeap), GB(c.oneHeap+enc.Weights), tiling.Tile, tiling.Overlap, GB(enc.Working), GB(enc.Total()), p.Largest().Name, GB(p.Peak))
			if enc.Working != want {
				t.Errorf("VAE encoder working set %d, want the tiled encode's %d", enc.Working, want)
			}
			if 4*enc.Working > c.oneHeap {
				t.Errorf("VAE encoder working set %d is not well under the one-piece %d", enc.Working, c.oneHeap)
			}
		})
	}
}
