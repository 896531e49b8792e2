package metal

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/engine/ml/cpu"
	"easel/engine/qi21"
	"easel/internal/golden"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// emuDevice returns the emulated device, skipping only when clang is not installed.
func emuDevice(t testing.TB) device.Device {
	t.Helper()
	d, err := emu.NewDevice(emu.Options{})
	if errors.Is(err, emu.ErrNoCompiler) {
		t.Skipf("Metal emulator unavailable: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestMain(m *testing.M) {
	code := m.Run()
	if convertedModels.dir != "" {
		os.RemoveAll(convertedModels.dir)
	}
	os.Exit(code)
}

// convertedModels caches the tiny snapshot converted once per profile for the whole test binary.
var convertedModels struct {
	sync.Mutex
	dir   string
	paths map[convert.Profile]string
}

// tinyModel converts the tiny snapshot with profile (q8: q8_2f block projections; cortiq: q4tp),
// maps the .cmf and loads the transformer on the CPU backend.
func tinyModel(t testing.TB, profile convert.Profile) (*qi21.Model, *cmf.File) {
	t.Helper()
	convertedModels.Lock()
	defer convertedModels.Unlock()
	if convertedModels.paths == nil {
		convertedModels.paths = map[convert.Profile]string{}
	}
	path, ok := convertedModels.paths[profile]
	if !ok {
		snap, err := golden.ModelSnapshot()
		if err != nil {
			t.Fatal(err)
		}
		if convertedModels.dir == "" {
			if convertedModels.dir, err = os.MkdirTemp("", "easel-metal-test-"); err != nil {
				t.Fatal(err)
			}
		}
		path = filepath.Join(convertedModels.dir, string(profile)+".cmf")
		if _, err := convert.Convert(context.Background(), snap, path, convert.Options{Profile: profile, NoVision: true}); err != nil {
			t.Fatal(err)
		}
		convertedModels.paths[profile] = path
	}
	f, err := cmf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := qi21.Load(f, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	return m, f
}

// ditCase is one dit_* reference case, decoded (as engine/qi21's tests read them).
type ditCase struct {
	name    string
	layout  *qi21.Layout
	text    []float32 // [L, context]
	latents []float32 // conditions then target, [Latents, in]
	sigmas  []float32
	c       *golden.Case
}

func loadDiTCases(t testing.TB) []*ditCase {
	t.Helper()
	paths, err := golden.Cases("dit")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no dit_* cases: %v", err)
	}
	var out []*ditCase
	for _, path := range paths {
		c, err := golden.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		dc := &ditCase{name: c.Name, c: c}
		if dc.text, _, err = c.Float32s("encoder_hidden_states"); err != nil {
			t.Fatal(err)
		}
		if dc.latents, _, err = c.Float32s("hidden_states"); err != nil {
			t.Fatal(err)
		}
		mt, err := c.Tensor("img_mask")
		if err != nil {
			t.Fatal(err)
		}
		mask := make([]bool, len(mt.Data))
		for i, b := range mt.Data {
			mask[i] = b != 0
		}
		var shapes [][2]int
		for _, s := range c.Meta["img_shapes"].([]any) {
			hw := s.([]any)
			shapes = append(shapes, [2]int{int(hw[1].(float64)), int(hw[2].(float64))})
		}
		for _, s := range c.Meta["sigmas"].([]any) {
			dc.sigmas = append(dc.sigmas, float32(s.(float64)))
		}
		if dc.layout, err = qi21.NewLayout(mask, shapes); err != nil {
			t.Fatal(err)
		}
		out = append(out, dc)
	}
	return out
}

func (dc *ditCase) want(t testing.TB, name string) []float32 {
	t.Helper()
	v, _, err := dc.c.Float32s(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// norm is the Euclidean norm.
func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}
