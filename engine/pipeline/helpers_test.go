package pipeline

import (
	"fmt"
	"math"
	"os"
	"testing"

	"easel/engine/cmf"
	"easel/engine/condimage"
	"easel/engine/convert"
	"easel/engine/ml"
	"easel/engine/ml/cpu"
	"easel/engine/vae"
	"easel/internal/golden"
	"easel/internal/tinymodel"
)

func TestMain(m *testing.M) {
	code := m.Run()
	tinymodel.RemoveAll()
	os.Exit(code)
}

// tinyModel is the tiny reference model converted once per test binary with the f16 profile
// (every weight at the snapshot's own precision: bf16 stays bf16, the VAE's f32 stays f32), so the
// model runs the reference's exact weights from a real memory-mapped .cmf. The file carries the
// snapshot's image-processor settings (the tiny model lowers min_pixels), so the pipeline needs
// no options to match.
func tinyModel(t testing.TB) string {
	return tinymodel.Path(t, convert.Options{Profile: convert.ProfileF16})
}

// newTinyPipeline opens the converted tiny model on be (a new CPU backend when nil).
func newTinyPipeline(t testing.TB, be ml.Backend) *Pipeline {
	t.Helper()
	path := tinyModel(t)
	f, err := cmf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if be == nil {
		be = cpu.New()
	}
	p, err := New(f, be, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// pipelineCase is one pipeline_* reference case with its metadata decoded: every setting comes
// from the case (golden.Pipeline), none from the public set.
type pipelineCase struct {
	*golden.Case
	prompt, neg   string
	cfg           float64
	steps, res    int
	width, height int // 0 when the case takes the size from the last condition image
	shapes        [][2]int
	condFiles     []string
	seed          uint64
}

func pipelineCases(t *testing.T) []*pipelineCase {
	t.Helper()
	paths, err := golden.Cases("pipeline")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no pipeline_* reference cases in the golden directory")
	}
	var out []*pipelineCase
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
		out = append(out, &pipelineCase{Case: c, prompt: spec.Prompt, neg: spec.Negative, cfg: spec.CFG,
			steps: spec.Steps, res: spec.Resolution, width: spec.Width, height: spec.Height,
			shapes: spec.Shapes, condFiles: spec.CondImages, seed: spec.Seed})
	}
	return out
}

// pickCase is the case a test needs, chosen by what it holds, never by name or position: among
// the cases for which keep is true, the first under better (nil: the first in name order). A
// folder without such a case skips the test, saying what it lacks.
func pickCase(t *testing.T, what string, keep func(*pipelineCase) bool, better func(a, b *pipelineCase) bool) *pipelineCase {
	t.Helper()
	var best *pipelineCase
	for _, c := range pipelineCases(t) {
		if keep(c) && (best == nil || (better != nil && better(c, best))) {
			best = c
		}
	}
	if best == nil {
		t.Skipf("no pipeline case in the golden directory has %s", what)
	}
	t.Logf("case %s: %s (%d condition images, CFG %g, %d steps, seed %d)", best.Name, what, len(best.condFiles), best.cfg, best.steps, best.seed)
	return best
}

// cfgCase is the cheapest case with CFG (two programs): fewest condition images, then the
// smallest target.
func cfgCase(t *testing.T) *pipelineCase {
	t.Helper()
	return pickCase(t, "CFG (two programs)", func(c *pipelineCase) bool { return c.cfg > 1 && c.steps >= 2 },
		func(a, b *pipelineCase) bool {
			if len(a.condFiles) != len(b.condFiles) {
				return len(a.condFiles) < len(b.condFiles)
			}
			ah, aw := a.target()
			bh, bw := b.target()
			return ah*aw < bh*bw
		})
}

// conditionedCase is the case with the most condition images (CFG preferred among equals).
func conditionedCase(t *testing.T) *pipelineCase {
	t.Helper()
	return pickCase(t, "condition images", func(c *pipelineCase) bool { return len(c.condFiles) > 0 },
		func(a, b *pipelineCase) bool {
			if len(a.condFiles) != len(b.condFiles) {
				return len(a.condFiles) > len(b.condFiles)
			}
			return a.cfg > 1 && b.cfg <= 1
		})
}

// target is the output's latent grid.
func (c *pipelineCase) target() (h, w int) {
	s := c.shapes[len(c.shapes)-1]
	return s[0], s[1]
}

func (c *pipelineCase) float32s(t *testing.T, name string) ([]float32, []int) {
	t.Helper()
	v, shape, err := c.Float32s(name)
	if err != nil {
		t.Fatal(err)
	}
	return v, shape
}

func (c *pipelineCase) int32s(t *testing.T, name string) []int32 {
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

// recordedNoise is the initial noise the reference drew: the last T rows of the first denoiser
// call's hidden states.
func (c *pipelineCase) recordedNoise(t *testing.T) []float32 {
	t.Helper()
	hidden, shape := c.float32s(t, "dit0_hidden_states")
	h, w := c.target()
	return hidden[(shape[1]-h*w)*shape[2]:]
}

// imageHWC is a decoded [4, H, W] image in [−1, 1] as the reference's output_type="np" holds
// it: [H, W, 4] in [0, 1].
func imageHWC(img *vae.Image) []float32 {
	out := make([]float32, len(img.Pix))
	n := img.H * img.W
	for c := range img.C {
		for p := range n {
			out[p*img.C+c] = vae.UnitRange(img.Pix[c*n+p])
		}
	}
	return out
}

// maxAbs is max |got − want| with a length check.
func maxAbs(t *testing.T, what string, got, want []float32) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, the reference has %d", what, len(got), len(want))
	}
	return golden.MaxAbsErr(got, want)
}

// compare8Bit checks RGBA bytes against the reference's [0, 1] values converted as numpy does:
// equal, or one code off where the reference sits within 1e-3 of a rounding tie (a 1e-7
// difference may cross it).
func compare8Bit(got []uint8, want []float32) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d bytes for %d reference values", len(got), len(want))
	}
	for i, x := range want {
		exp := vae.To8Bit(x)
		if got[i] == exp {
			continue
		}
		frac := float64(x*255) - math.Floor(float64(x*255))
		if math.Abs(float64(got[i])-float64(exp)) > 1 || math.Abs(frac-0.5) > 1e-3 {
			return fmt.Errorf("byte %d (pixel %d, channel %d): got %d, the reference %.6f gives %d", i, i/4, i%4, got[i], x, exp)
		}
	}
	return nil
}

// newStockProcessorPipeline opens the tiny model with the stock Qwen3-VL image processor (min_pixels
// 65536), as a cortiq file without Easel's processor blob would run it.
func newStockProcessorPipeline(t testing.TB) *Pipeline {
	t.Helper()
	path := tinyModel(t)
	f, err := cmf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	stock := condimage.DefaultImageProcessorConfig()
	p, err := New(f, cpu.New(), Options{ImageProcessor: &stock})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
