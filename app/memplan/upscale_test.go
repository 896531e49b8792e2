package memplan

import (
	"testing"

	"easel/engine/upscale"
)

// TestUpscaleFitsA16GBMac: a full-size RRDBNet ×4 of a 2048² picture (8192² out) in the tiles
// ChooseTiling picks fits a 16 GB Mac's GPU budget (three quarters of it), on the device and on
// the CPU; in one piece it does not; tiles shrink the working set.
func TestUpscaleFitsA16GBMac(t *testing.T) {
	cfg := upscale.FullSizeRRDBNet()
	const mac16 = 16 << 30
	tl := upscale.ChooseTiling(cfg, 2048, 2048, upscale.DefaultBudget)
	if tl.Tile == 0 {
		t.Fatal("a 2048² picture is not tiled")
	}
	for _, metal := range []bool{true, false} {
		p := PredictUpscale(cfg, 2048, 2048, tl, metal, mac16/4*3)
		if !p.Fits() || p.Pictures < 4*8192*8192 {
			t.Fatalf("metal %v: %s does not fit, or counts no 8192² result (%d bytes of pictures)", metal, p.Explain(), p.Pictures)
		}
		whole := PredictUpscale(cfg, 2048, 2048, upscale.Tiling{}, metal, mac16/4*3)
		if whole.Fits() || whole.Working <= p.Working {
			t.Fatalf("metal %v: one piece (%s) fits or needs less than tiles (%s)", metal, whole.Explain(), p.Explain())
		}
	}
}
