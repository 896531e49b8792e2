// Package pipelinecase reads the pipeline_* reference cases (internal/golden) as the pipeline's
// tests use them: every setting from the case (golden.Pipeline), the recorded tensors by name,
// and a choice of case by what it holds, never by name or position. It imports no pipeline
// package, so the pipeline's own tests and its Metal wiring's share it.
package pipelinecase

import (
	"image"
	"testing"

	"easel/engine/condimage"
	"easel/engine/imageio"
	"easel/engine/qwen3vl"
	"easel/engine/vae"
	"easel/internal/golden"
)

// Case is one pipeline_* reference case with its metadata decoded.
type Case struct {
	*golden.Case
	Prompt, Negative string
	CFG              float64
	Steps            int
	Resolution       int
	Width, Height    int // 0 when the case takes the size from the last condition image
	Shapes           [][2]int
	CondFiles        []string
	Seed             uint64
}

// All loads every pipeline case of the golden directory; a directory without one fails the test.
func All(t testing.TB) []*Case {
	t.Helper()
	paths, err := golden.Cases("pipeline")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no pipeline_* reference cases in the golden directory")
	}
	var out []*Case
	for _, path := range paths {
		c, err := golden.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		spec, err := c.Pipeline()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, &Case{Case: c, Prompt: spec.Prompt, Negative: spec.Negative, CFG: spec.CFG,
			Steps: spec.Steps, Resolution: spec.Resolution, Width: spec.Width, Height: spec.Height,
			Shapes: spec.Shapes, CondFiles: spec.CondImages, Seed: spec.Seed})
	}
	return out
}

// Pick is the case a reference test needs, chosen by what it holds: among the cases for which
// keep is true, the first under better (nil: the first in name order). A folder without such a
// case skips the test, saying what it lacks (a reference test compares with a case's recorded
// data, which no other case stands in for).
func Pick(t testing.TB, what string, keep func(*Case) bool, better func(a, b *Case) bool) *Case {
	t.Helper()
	best := find(t, keep, better)
	if best == nil {
		t.Skipf("no pipeline case in the golden directory has %s", what)
	}
	t.Logf("case %s: %s (%d condition images, CFG %g, %d steps, seed %d)", best.Name, what, len(best.CondFiles), best.CFG, best.Steps, best.Seed)
	return best
}

func find(t testing.TB, keep func(*Case) bool, better func(a, b *Case) bool) *Case {
	var best *Case
	for _, c := range All(t) {
		if keep(c) && (best == nil || (better != nil && better(c, best))) {
			best = c
		}
	}
	return best
}

// Cheaper orders cases by fewest condition images, then the smallest target.
func Cheaper(a, b *Case) bool {
	if len(a.CondFiles) != len(b.CondFiles) {
		return len(a.CondFiles) < len(b.CondFiles)
	}
	ah, aw := a.Target()
	bh, bw := b.Target()
	return ah*aw < bh*bw
}

// Target is the output's latent grid.
func (c *Case) Target() (h, w int) {
	s := c.Shapes[len(c.Shapes)-1]
	return s[0], s[1]
}

// Floats is a recorded float tensor and its shape.
func (c *Case) Floats(t testing.TB, name string) ([]float32, []int) {
	t.Helper()
	v, shape, err := c.Float32s(name)
	if err != nil {
		t.Fatal(err)
	}
	return v, shape
}

// Ints is a recorded integer tensor as int32s.
func (c *Case) Ints(t testing.TB, name string) []int32 {
	t.Helper()
	v, _, err := c.Int64s(name)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}

// RecordedNoise is the initial noise the reference drew: the last T rows of the first denoiser
// call's hidden states.
func (c *Case) RecordedNoise(t testing.TB) []float32 {
	t.Helper()
	hidden, shape := c.Floats(t, "dit0_hidden_states")
	h, w := c.Target()
	return hidden[(shape[1]-h*w)*shape[2]:]
}

// ConditionsFor stands in for prepared images with only their patch grids (the prompt builder
// reads nothing else) for a recorded prompt (prefix te0 or te1).
func (c *Case) ConditionsFor(t testing.TB, prefix string) []*condimage.ConditionImage {
	t.Helper()
	name := prefix + "_image_grid_thw"
	if !c.Has(name) {
		return nil
	}
	grids := c.Ints(t, name)
	var out []*condimage.ConditionImage
	for i := 0; i+3 <= len(grids); i += 3 {
		out = append(out, &condimage.ConditionImage{GridTHW: [3]int{int(grids[i]), int(grids[i+1]), int(grids[i+2])}})
	}
	return out
}

// SplitVision cuts the recorded pixel_values into one VisionInput per image by its grid.
func (c *Case) SplitVision(t testing.TB, prefix string) []qwen3vl.VisionInput {
	t.Helper()
	px, shape := c.Floats(t, prefix+"_pixel_values")
	var out []qwen3vl.VisionInput
	row := 0
	for _, ci := range c.ConditionsFor(t, prefix) {
		n := ci.GridTHW[0] * ci.GridTHW[1] * ci.GridTHW[2]
		out = append(out, qwen3vl.VisionInput{Pixels: px[row*shape[1] : (row+n)*shape[1]], Grid: ci.GridTHW})
		row += n
	}
	if row != shape[0] {
		t.Fatalf("%s_pixel_values has %d rows, the grids account for %d", prefix, shape[0], row)
	}
	return out
}

// SplitVisionIf is SplitVision, or nil when the prompt has no images.
func (c *Case) SplitVisionIf(t testing.TB, prefix string) []qwen3vl.VisionInput {
	if !c.Has(prefix + "_pixel_values") {
		return nil
	}
	return c.SplitVision(t, prefix)
}

// CondImages decodes the case's condition PNGs.
func (c *Case) CondImages(t testing.TB) []*image.NRGBA {
	t.Helper()
	var out []*image.NRGBA
	for _, name := range c.CondFiles {
		path, err := golden.Path(name)
		if err != nil {
			t.Fatal(err)
		}
		img, err := imageio.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, img)
	}
	return out
}

// ImageHWC is a decoded [4, H, W] image in [−1, 1] as the reference's output_type="np" holds it:
// [H, W, 4] in [0, 1].
func ImageHWC(img *vae.Image) []float32 {
	out := make([]float32, len(img.Pix))
	n := img.H * img.W
	for c := range img.C {
		for p := range n {
			out[p*img.C+c] = vae.UnitRange(img.Pix[c*n+p])
		}
	}
	return out
}

// MaxAbs is max |got − want| with a length check.
func MaxAbs(t testing.TB, what string, got, want []float32) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, the reference has %d", what, len(got), len(want))
	}
	return golden.MaxAbsErr(got, want)
}
