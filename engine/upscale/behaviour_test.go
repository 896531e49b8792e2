package upscale_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"easel/engine/ml"
	"easel/engine/ml/cpu"
	"easel/engine/safetensors"
	"easel/engine/upscale"
	"easel/internal/golden"
)

// largestCase is the case with the largest input (the one made for tiled-against-untiled checks).
func largestCase(t *testing.T) (*golden.UpscaleCase, string) {
	var best *golden.UpscaleCase
	for _, rc := range refCases(t) {
		if best == nil || rc.Input.Rect.Dx()*rc.Input.Rect.Dy() > best.Input.Rect.Dx()*best.Input.Rect.Dy() {
			best = rc
		}
	}
	return best, best.Files[0]
}

// TestTiledMatchesUntiled: 16-pixel tiles with the default padding stay within one level of the
// untiled picture, every tile reports progress, and the reference stays matched.
func TestTiledMatchesUntiled(t *testing.T) {
	rc, file := largestCase(t)
	m, err := upscale.Open(cpu.New(), file)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := m.Picture(context.Background(), rc.Input, upscale.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tiling := upscale.Tiling{Tile: 16, Pad: upscale.DefaultPad}
	var ticks, total int
	tiled, err := m.Picture(context.Background(), rc.Input, upscale.Options{Tiling: tiling, Progress: func(done, n int) {
		ticks++
		if done != ticks {
			t.Fatalf("progress %d after %d tiles", done, ticks)
		}
		total = n
	}})
	if err != nil {
		t.Fatal(err)
	}
	w, h := rc.Input.Rect.Dx(), rc.Input.Rect.Dy()
	if want := tiling.Tiles(h, w); ticks != want || total != want || want < 4 {
		t.Fatalf("%d progress calls of %d, want one per tile (%d)", ticks, total, want)
	}
	worst := 0
	for i := range whole.Pix {
		worst = max(worst, absInt(int(whole.Pix[i])-int(tiled.Pix[i])))
	}
	if worst > 1 {
		t.Fatalf("tiled differs from untiled by up to %d levels", worst)
	}
	checkU8(t, "tiled", tiled, rc, 1)
}

func absInt(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// TestCancelBetweenTiles: cancelling during a tile stops before the next one.
func TestCancelBetweenTiles(t *testing.T) {
	rc, file := largestCase(t)
	m, err := upscale.Open(cpu.New(), file)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	_, err = m.Picture(ctx, rc.Input, upscale.Options{Tiling: upscale.Tiling{Tile: 16, Pad: 4}, Progress: func(done, total int) {
		calls++
		if done == 2 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || calls != 2 {
		t.Fatalf("got %v after %d tiles, want a cancellation after 2", err, calls)
	}
}

// TestPlanMatchesRun: the dry run's activation peak is what the real run allocates (counted by a
// backend wrapper), for every case's network, whole and tiled.
func TestPlanMatchesRun(t *testing.T) {
	for _, rc := range refCases(t) {
		for _, file := range rc.Files {
			be := &counting{Backend: cpu.New()}
			m, err := upscale.Open(be, file)
			if err != nil {
				t.Fatal(err)
			}
			w, h := rc.Input.Rect.Dx(), rc.Input.Rect.Dy()
			for _, tiling := range []upscale.Tiling{{}, {Tile: 8, Pad: 4}} {
				be.live, be.peak = 0, 0
				if _, err := m.Picture(context.Background(), rc.Input, upscale.Options{Tiling: tiling}); err != nil {
					t.Fatal(err)
				}
				plan := upscale.PlanFor(m.Config(), w, h, tiling)
				if be.peak != plan.Activations {
					t.Fatalf("%s %+v: the run's peak is %d bytes, the plan says %d", filepath.Base(file), tiling, be.peak, plan.Activations)
				}
			}
			break
		}
	}
}

// counting is a backend that counts the bytes of the tensors it makes and frees.
type counting struct {
	upscale.Backend
	live, peak int64
	sizes      map[any]int64
}

func (c *counting) track(t any, shape []int, err error) {
	if err != nil {
		return
	}
	n := int64(4)
	for _, d := range shape {
		n *= int64(d)
	}
	if c.sizes == nil {
		c.sizes = map[any]int64{}
	}
	c.sizes[t] = n
	c.live += n
	c.peak = max(c.peak, c.live)
}

func (c *counting) New(shape ...int) (ml.Tensor, error) {
	t, err := c.Backend.New(shape...)
	c.track(t, shape, err)
	return t, err
}

func (c *counting) Upload(data []float32, shape ...int) (ml.Tensor, error) {
	t, err := c.Backend.Upload(data, shape...)
	if len(shape) == 3 { // the tile's input, not the weights' biases
		c.track(t, shape, err)
	}
	return t, err
}

func (c *counting) Free(t ml.Tensor) {
	c.live -= c.sizes[t]
	delete(c.sizes, t)
	c.Backend.Free(t)
}

// TestNotAnUpscaler: files of other networks and broken files get sentences.
func TestNotAnUpscaler(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]struct {
		tensors map[string][]int
		want    string
	}{
		"swinir":     {map[string][]int{"layers.0.residual_group.blocks.0.attn.qkv.weight": {180, 60}, "conv_first.weight": {60, 3, 3, 3}}, "not an upscaler Easel runs"},
		"esrgan+":    {map[string][]int{"model.0.weight": {64, 3, 3, 3}, "model.1.sub.0.RDB1.conv1.0.weight": {32, 64, 3, 3}, "model.1.sub.0.RDB1.conv1x1.weight": {32, 64, 1, 1}}, "ESRGAN+"},
		"srvgg relu": {map[string][]int{"body.0.weight": {8, 3, 3, 3}, "body.0.bias": {8}, "body.2.weight": {48, 8, 3, 3}, "body.2.bias": {48}}, "cannot be told"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".safetensors")
			writeZeros(t, p, c.tensors)
			_, err := upscale.Open(cpu.New(), p)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a sentence with %q", err, c.want)
			}
		})
	}
}

// writeZeros writes a safetensors file of zero F32 tensors of the given shapes.
func writeZeros(t *testing.T, path string, tensors map[string][]int) {
	t.Helper()
	var list []*safetensors.Tensor
	for name, shape := range tensors {
		n := 1
		for _, d := range shape {
			n *= d
		}
		list = append(list, safetensors.F32Tensor(name, shape, make([]float32, n)))
	}
	if err := safetensors.WriteFile(path, list, nil); err != nil {
		t.Fatal(err)
	}
}

// TestChooseTiling: the chosen tile's activations fit the budget and the next larger tile's do
// not; a picture whose whole run fits is not tiled.
func TestChooseTiling(t *testing.T) {
	cfg := &upscale.Config{Arch: upscale.RRDBNet, Scale: 4, Features: 64, Growth: 32, Blocks: 23, Unshuffle: 1, Ups: 2}
	const budget = 256 << 20
	tl := upscale.ChooseTiling(cfg, 1024, 768, budget)
	if tl.Tile == 0 || upscale.PlanFor(cfg, 1024, 768, tl).Activations > budget {
		t.Fatalf("chose %+v (%d bytes) for a %d budget", tl, upscale.PlanFor(cfg, 1024, 768, tl).Activations, budget)
	}
	next := upscale.Tiling{Tile: tl.Tile + 16, Pad: tl.Pad}
	if upscale.PlanFor(cfg, 1024, 768, next).Activations <= budget {
		t.Fatalf("a %d tile fits too, %d was chosen", next.Tile, tl.Tile)
	}
	if got := upscale.ChooseTiling(cfg, 32, 24, budget); got.Tile != 0 {
		t.Fatalf("a 32×24 picture is tiled: %+v", got)
	}
}
