package vae

import (
	"context"
	"testing"

	"easel/engine/ml"
	"easel/engine/ml/cpu"
)

// The dry run of a tiled encode peaks where a real one does, byte for byte: every tile's encode
// frees its activations before the next starts, and the blend is host memory.
func TestEncodeTiledPlanMatchesARealRun(t *testing.T) {
	b := &countingCPU{Backend: cpu.New(), sizes: map[ml.Tensor]int64{}}
	m, err := Load(b, openSnapshotVAE(t))
	if err != nil {
		t.Fatal(err)
	}
	tiling := Tiling{Tile: 3, Overlap: 1}
	base := b.live
	b.peak = base
	if _, _, err := m.EncodeTiled(context.Background(), testImage(4, 80, 64, 2), tiling); err != nil {
		t.Fatal(err)
	}
	if b.live != base {
		t.Errorf("%d bytes of tensors were never freed", b.live-base)
	}
	plan, err := m.PlanEncodeTiled(80, 64, tiling)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.peak - base; got != plan.PeakActivationBytes {
		t.Errorf("tiled encode 80×64 in %v: the real run peaked at %d bytes, the plan says %d", tiling, got, plan.PeakActivationBytes)
	}
}

// A tiled encode plan encodes every tile EncodeTiled encodes: its convolution work is the tiles'
// count times one tile's, and its peak is one tile's.
func TestTiledEncodePlanCountsEveryTile(t *testing.T) {
	cfg := publishedConfig(t)
	tiling := Tiling{Tile: 8, Overlap: 4}
	for _, g := range [][2]int{{8, 8}, {12, 20}, {19, 9}} {
		ys, th := tiling.spans(g[0])
		xs, tw := tiling.spans(g[1])
		one, err := PlanEncodeFor(cfg, 16*th, 16*tw)
		if err != nil {
			t.Fatal(err)
		}
		tiled, err := PlanEncodeTiledFor(cfg, 16*g[0], 16*g[1], tiling)
		if err != nil {
			t.Fatal(err)
		}
		if n := float64(len(ys) * len(xs)); tiled.ConvFLOPs != n*one.ConvFLOPs {
			t.Errorf("%d×%d latents in %v: %.4g conv FLOPs, want %v tiles × %.4g", g[0], g[1], tiling, tiled.ConvFLOPs, n, one.ConvFLOPs)
		}
		if tiled.PeakActivationBytes != one.PeakActivationBytes {
			t.Errorf("%d×%d latents in %v: peak %d, want one tile's %d", g[0], g[1], tiling, tiled.PeakActivationBytes, one.PeakActivationBytes)
		}
	}
}

func TestChooseEncodeTilingPrefersOnePieceAndKeepsTheBudget(t *testing.T) {
	m, _ := loadTiny(t)
	const H, W = 640, 640 // 40² latents
	whole, err := m.PlanEncode(H, W)
	if err != nil {
		t.Fatal(err)
	}
	tiling, plan, err := m.ChooseEncodeTiling(H, W, whole.PeakActivationBytes)
	if err != nil || tiling != nil || plan != whole {
		t.Errorf("with room for one piece: tiling %v, plan %+v, err %v; want nil, %+v", tiling, plan, err, whole)
	}
	budget := whole.PeakActivationBytes / 3
	tiling, plan, err = m.ChooseEncodeTiling(H, W, budget)
	if err != nil || tiling == nil || plan.PeakActivationBytes > budget {
		t.Fatalf("with a third of that: tiling %v, plan %+v, err %v", tiling, plan, err)
	}
	if want, err := m.PlanEncodeTiled(H, W, *tiling); err != nil || want != plan {
		t.Errorf("the chosen plan %+v is not the tiling's own %+v (%v)", plan, want, err)
	}
	// the largest candidate that fits: the next larger one does not
	for i, side := range tileCandidates {
		if side == tiling.Tile && i > 0 && tileCandidates[i-1] < 40 {
			bigger, err := m.PlanEncodeTiled(H, W, Tiling{Tile: tileCandidates[i-1], Overlap: max(4, tileCandidates[i-1]/4)})
			if err != nil || bigger.PeakActivationBytes <= budget {
				t.Errorf("tiles of %d were chosen but %d fit too (%d bytes, %v)", side, tileCandidates[i-1], bigger.PeakActivationBytes, err)
			}
		}
	}
	t.Logf("640² in %d MB: tiles of %d, overlap %d, peak %d MB (one piece %d MB)", budget>>20, tiling.Tile, tiling.Overlap, plan.PeakActivationBytes>>20, whole.PeakActivationBytes>>20)
	if _, _, err := m.ChooseEncodeTiling(H, W, 1<<10); err == nil {
		t.Error("a 1 kB budget was met")
	}
	if _, _, err := m.ChooseEncodeTiling(24, 16, 1<<40); err == nil {
		t.Error("a 24-pixel-high image (not a multiple of 16) was planned")
	}
}

// TestEncodeMemoryIsBoundedByTheTile plans the published encoder geometry (dims
// [96, 96, 192, 384, 768, 768]): a tiled 2048² encode needs no more than one tile's encode. The
// figures go to docs/BENCHMARKS.md (go test ./engine/vae -run EncodeMemory -v).
func TestEncodeMemoryIsBoundedByTheTile(t *testing.T) {
	const MB = 1 << 20
	cfg := publishedConfig(t)
	for _, side := range []int{512, 1024, 2048} {
		p, err := planEncode(cfg, side, side, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("encode untiled %d²: activations at peak %.0f MB, %.2f TFLOP of convolutions", side, float64(p.PeakActivationBytes)/MB, p.ConvFLOPs/1e12)
	}
	for _, tiling := range []Tiling{{Tile: 64, Overlap: 16}, {Tile: 48, Overlap: 12}, DefaultTiling} {
		oneTile, err := planEncode(cfg, 16*tiling.Tile, 16*tiling.Tile, nil)
		if err != nil {
			t.Fatal(err)
		}
		tiled, err := planEncode(cfg, 2048, 2048, &tiling)
		if err != nil {
			t.Fatal(err)
		}
		ys, size := tiling.spans(128)
		t.Logf("encode tiled 2048² in %+v (%d×%d tiles of %d²): activations at peak %.0f MB (one %d² tile untiled: %.0f MB), %.2f TFLOP of convolutions",
			tiling, len(ys), len(ys), size, float64(tiled.PeakActivationBytes)/MB, tiling.Tile, float64(oneTile.PeakActivationBytes)/MB, tiled.ConvFLOPs/1e12)
		if size == tiling.Tile && tiled.PeakActivationBytes != oneTile.PeakActivationBytes {
			t.Errorf("tiled 2048² encode in %+v peaks at %d bytes, one tile at %d", tiling, tiled.PeakActivationBytes, oneTile.PeakActivationBytes)
		}
	}
}
