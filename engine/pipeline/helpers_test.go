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
	"easel/internal/pipelinecase"
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

// The pipeline_* reference cases (package pipelinecase).
type pipelineCase = pipelinecase.Case

func pipelineCases(t *testing.T) []*pipelineCase { return pipelinecase.All(t) }

var (
	imageHWC = pipelinecase.ImageHWC
	maxAbs   = pipelinecase.MaxAbs
)

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

// q8Pipeline opens the tiny model converted with the q8 profile (vision included), with opts.
func q8Pipeline(t *testing.T, opts func(*cmf.File) Options) *Pipeline {
	t.Helper()
	f, err := cmf.Open(tinymodel.Path(t, convert.Options{Profile: convert.ProfileQ8}))
	if err != nil {
		t.Fatal(err)
	}
	var o Options
	if opts != nil {
		o = opts(f)
	}
	p, err := New(f, cpu.New(), o)
	if err != nil {
		f.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(); f.Close() })
	return p
}

// behaviourRequest is the request a test of behaviour builds (pipelinecase.BehaviourRequest): CFG
// (two programs) with images made-up condition images, whatever cases the folder holds.
func behaviourRequest(t *testing.T, images int) Request {
	t.Helper()
	b := pipelinecase.BehaviourRequest(t, images)
	return Request{Prompt: b.Prompt, NegativePrompt: b.Negative, Images: b.Images, Width: b.Width, Height: b.Height,
		Resolution: b.Resolution, Steps: b.Steps, CFG: b.CFG, Seed: b.Seed}
}
