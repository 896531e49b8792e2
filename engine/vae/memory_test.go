package vae

import (
	"context"
	"errors"
	"strings"
	"testing"

	"easel/engine/ml"
	"easel/engine/ml/cpu"
	"easel/engine/quant"
)

// countingCPU is the CPU backend with a count of live tensor bytes (views excluded), to check the
// dry run's accounting against a real decode.
type countingCPU struct {
	*cpu.Backend
	sizes      map[ml.Tensor]int64
	live, peak int64
}

func (b *countingCPU) add(t ml.Tensor) {
	n := 4 * elements(t.Shape())
	b.sizes[t] = n
	b.live += n
	b.peak = max(b.peak, b.live)
}

func (b *countingCPU) New(shape ...int) (ml.Tensor, error) {
	t, err := b.Backend.New(shape...)
	if err == nil {
		b.add(t)
	}
	return t, err
}

func (b *countingCPU) Upload(data []float32, shape ...int) (ml.Tensor, error) {
	t, err := b.Backend.Upload(data, shape...)
	if err == nil {
		b.add(t)
	}
	return t, err
}

func (b *countingCPU) Free(t ml.Tensor) {
	b.live -= b.sizes[t]
	delete(b.sizes, t)
	b.Backend.Free(t)
}

// The dry run's peak is the real backend's peak of live tensors, byte for byte.
func TestPlanMatchesARealRun(t *testing.T) {
	b := &countingCPU{Backend: cpu.New(), sizes: map[ml.Tensor]int64{}}
	m, err := Load(b, openSnapshotVAE(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		h, w   int
		tiling *Tiling
	}{{3, 5, nil}, {6, 6, &Tiling{Tile: 4, Overlap: 2}}} {
		base := b.live
		b.peak = base
		zn := randomLatents(m.Config().ZDim, tc.h, tc.w, 2)
		if tc.tiling == nil {
			_, err = m.Decode(context.Background(), zn)
		} else {
			_, err = m.DecodeTiled(context.Background(), zn, *tc.tiling)
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.live != base {
			t.Errorf("%d×%d: %d bytes of tensors were never freed", tc.h, tc.w, b.live-base)
		}
		plan, err := m.PlanDecode(tc.h, tc.w, tc.tiling)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.peak - base; got != plan.PeakActivationBytes {
			t.Errorf("%d×%d (tiling %v): the real decode peaked at %d bytes, the plan says %d", tc.h, tc.w, tc.tiling, got, plan.PeakActivationBytes)
		}
	}
	base := b.live
	b.peak = base
	if _, _, err := m.Encode(context.Background(), &Image{C: 4, H: 48, W: 32, Pix: make([]float32, 4*48*32)}); err != nil {
		t.Fatal(err)
	}
	plan, err := m.PlanEncode(48, 32)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.peak - base; got != plan.PeakActivationBytes {
		t.Errorf("encode 48×32: the real run peaked at %d bytes, the plan says %d", got, plan.PeakActivationBytes)
	}
}

// TestDecodeMemoryIsBoundedByTheTile plans the published decoder geometry (dims
// [1152, 1152, 1152, 576, 288, 144]): a tiled 2048² decode must need no more than one tile's
// decode, whatever the image size. The figures go to docs/BENCHMARKS.md.
func TestDecodeMemoryIsBoundedByTheTile(t *testing.T) {
	const MB = 1 << 20
	cfg := publishedConfig(t)
	oneTile, err := planDecode(cfg, DefaultTiling.Tile, DefaultTiling.Tile, nil)
	if err != nil {
		t.Fatal(err)
	}
	tiled, err := planDecode(cfg, 128, 128, &DefaultTiling)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("activations at peak: one %d² tile %.0f MB, tiled 128² grid (2048²) %.0f MB (%.1f TFLOP of convolutions)",
		DefaultTiling.Tile, float64(oneTile.PeakActivationBytes)/MB, float64(tiled.PeakActivationBytes)/MB, tiled.ConvFLOPs/1e12)
	if tiled.PeakActivationBytes != oneTile.PeakActivationBytes {
		t.Errorf("tiled 2048² decode peaks at %d bytes, one tile at %d", tiled.PeakActivationBytes, oneTile.PeakActivationBytes)
	}
	for _, side := range []int{16, 32, 64, 128} {
		p, err := planDecode(cfg, side, side, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("untiled %d² latents (%d² pixels): activations at peak %.0f MB, %.2f TFLOP of convolutions", side, 16*side, float64(p.PeakActivationBytes)/MB, p.ConvFLOPs/1e12)
	}
	p, err := planDecode(cfg, 64, 64, &DefaultTiling)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tiled 64² latents (1024² pixels): activations at peak %.0f MB, %.2f TFLOP of convolutions", float64(p.PeakActivationBytes)/MB, p.ConvFLOPs/1e12)
	// The encoder runs untiled on ~1 MP condition images (spec §3.1).
	if p, err = planEncode(cfg, 1024, 1024, nil); err != nil {
		t.Fatal(err)
	}
	t.Logf("encode 1024² (untiled): activations at peak %.0f MB, %.2f TFLOP of convolutions", float64(p.PeakActivationBytes)/MB, p.ConvFLOPs/1e12)
	// The tiny model's figure, to set beside its measured RSS (BenchmarkDecodeTiled2048Tiny).
	tiny, _ := loadTiny(t)
	if p, err = tiny.PlanDecode(128, 128, &DefaultTiling); err != nil {
		t.Fatal(err)
	}
	t.Logf("tiny model (decoder dims %v), tiled 2048²: activations at peak %.1f MB", tiny.Config().DecoderDims(), float64(p.PeakActivationBytes)/MB)
}

func TestChooseTilingPrefersOnePieceAndKeepsTheBudget(t *testing.T) {
	m, _ := loadTiny(t)
	whole, err := m.PlanDecode(40, 40, nil)
	if err != nil {
		t.Fatal(err)
	}
	tiling, plan, err := m.ChooseTiling(40, 40, whole.PeakActivationBytes)
	if err != nil || tiling != nil || plan != whole {
		t.Errorf("with room for one piece: tiling %v, plan %+v, err %v; want nil, %+v", tiling, plan, err, whole)
	}
	budget := whole.PeakActivationBytes / 3
	tiling, plan, err = m.ChooseTiling(40, 40, budget)
	if err != nil || tiling == nil || plan.PeakActivationBytes > budget {
		t.Fatalf("with a third of that: tiling %v, plan %+v, err %v", tiling, plan, err)
	}
	t.Logf("40² in %d MB: tiles of %d, overlap %d, peak %d MB", budget>>20, tiling.Tile, tiling.Overlap, plan.PeakActivationBytes>>20)
	if _, _, err := m.ChooseTiling(40, 40, 1<<10); err == nil {
		t.Error("a 1 kB budget was met")
	}
}

// A tiled plan decodes every tile DecodeTiled decodes: its convolution work is the tiles' count
// times one tile's.
func TestTiledPlanCountsEveryTile(t *testing.T) {
	cfg := publishedConfig(t)
	tiling := Tiling{Tile: 8, Overlap: 4}
	for _, g := range [][2]int{{8, 8}, {12, 20}, {19, 9}} {
		ys, th := tiling.spans(g[0])
		xs, tw := tiling.spans(g[1])
		one, err := PlanDecodeFor(cfg, th, tw)
		if err != nil {
			t.Fatal(err)
		}
		tiled, err := PlanDecodeTiledFor(cfg, g[0], g[1], tiling)
		if err != nil {
			t.Fatal(err)
		}
		if n := float64(len(ys) * len(xs)); tiled.ConvFLOPs != n*one.ConvFLOPs {
			t.Errorf("%d×%d in %v: %.4g conv FLOPs, want %v tiles × %.4g", g[0], g[1], tiling, tiled.ConvFLOPs, n, one.ConvFLOPs)
		}
		if tiled.PeakActivationBytes != one.PeakActivationBytes {
			t.Errorf("%d×%d in %v: peak %d, want one tile's %d", g[0], g[1], tiling, tiled.PeakActivationBytes, one.PeakActivationBytes)
		}
	}
}

// failingCPU is countingCPU whose convolutions fail from the n-th on.
type failingCPU struct {
	*countingCPU
	convs, failAt int
}

func (b *failingCPU) Conv2D(dst, x ml.Tensor, w *quant.Tensor, bias ml.Tensor, spec ml.ConvSpec) error {
	if b.convs++; b.convs >= b.failAt {
		return errors.New("injected failure")
	}
	return b.countingCPU.Conv2D(dst, x, w, bias, spec)
}

// A decode or encode that fails part way frees every tensor it made, wherever it stops.
func TestAFailedRunFreesItsTensors(t *testing.T) {
	b := &failingCPU{countingCPU: &countingCPU{Backend: cpu.New(), sizes: map[ml.Tensor]int64{}}, failAt: 1 << 30}
	m, err := Load(b, openSnapshotVAE(t))
	if err != nil {
		t.Fatal(err)
	}
	base := b.live
	b.convs = 0
	if _, err := m.DecodeTiled(context.Background(), randomLatents(m.Config().ZDim, 3, 3, 5), Tiling{Tile: 2, Overlap: 1}); err != nil {
		t.Fatal(err)
	}
	decodeConvs := b.convs
	b.convs = 0
	img := &Image{C: 4, H: 32, W: 16, Pix: make([]float32, 4*32*16)}
	if _, _, err := m.Encode(context.Background(), img); err != nil {
		t.Fatal(err)
	}
	encodeConvs := b.convs
	for _, at := range []int{1, 2, 3, 7, decodeConvs / 2, decodeConvs - 1} {
		b.convs, b.failAt = 0, at
		_, err := m.DecodeTiled(context.Background(), randomLatents(m.Config().ZDim, 3, 3, 5), Tiling{Tile: 2, Overlap: 1})
		if err == nil || !strings.Contains(err.Error(), "injected failure") {
			t.Errorf("decode failing at conv %d of %d: %v", at, decodeConvs, err)
		}
		if b.live != base {
			t.Errorf("decode failing at conv %d of %d left %d bytes of tensors", at, decodeConvs, b.live-base)
		}
	}
	for _, at := range []int{1, 4, encodeConvs / 2, encodeConvs} {
		b.convs, b.failAt = 0, at
		if _, _, err := m.Encode(context.Background(), img); err == nil {
			t.Errorf("encode failing at conv %d of %d succeeded", at, encodeConvs)
		}
		if b.live != base {
			t.Errorf("encode failing at conv %d of %d left %d bytes of tensors", at, encodeConvs, b.live-base)
		}
	}
}
