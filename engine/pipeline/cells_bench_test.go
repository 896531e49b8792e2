package pipeline

import (
	"image"
	"testing"
	"time"
)

// BenchmarkGrid times a 4×4 grid over seed (16 cells of seeds 1–16 over one prefill, as grid.Plan
// groups them for RunCells) against the 16 single runs of the same seeds, in the same loop
// iteration, without and with a condition image. Metrics: both wall times, their ratio, and the
// prefills each made (counted at the denoiser).
func BenchmarkGrid(b *testing.B) {
	p, d := newCountingPipeline(b)
	cond := image.NewNRGBA(image.Rect(0, 0, 64, 64))
	for i := range cond.Pix {
		cond.Pix[i] = uint8(i * 31)
	}
	const size, steps = 128, 8
	cells := make([]Cell, 16)
	for i := range cells {
		cells[i] = Cell{Seed: uint64(i + 1)}
	}
	for _, c := range []struct {
		name   string
		images []*image.NRGBA
	}{{"text-only", nil}, {"one-condition-image", []*image.NRGBA{cond}}} {
		b.Run(c.name, func(b *testing.B) {
			req := Request{Prompt: "a lighthouse on a cliff at dusk", Images: c.images, Width: size, Height: size, Steps: steps, CFG: 1}
			var grid, singles time.Duration
			var gridPrefills, singlePrefills int32
			n := 0
			for b.Loop() {
				d.prefills.Store(0)
				t0 := time.Now()
				if _, err := p.RunCells(b.Context(), req, cells, nil); err != nil {
					b.Fatal(err)
				}
				grid += time.Since(t0)
				gridPrefills += d.prefills.Swap(0)
				t0 = time.Now()
				for _, cell := range cells {
					if _, err := p.Run(b.Context(), cell.request(req), nil); err != nil {
						b.Fatal(err)
					}
				}
				singles += time.Since(t0)
				singlePrefills += d.prefills.Swap(0)
				n++
			}
			b.ReportMetric(grid.Seconds()/float64(n), "grid-s/op")
			b.ReportMetric(singles.Seconds()/float64(n), "singles-s/op")
			b.ReportMetric(grid.Seconds()/singles.Seconds(), "grid/singles")
			b.ReportMetric(float64(gridPrefills)/float64(n), "grid-prefills/op")
			b.ReportMetric(float64(singlePrefills)/float64(n), "singles-prefills/op")
		})
	}
}
