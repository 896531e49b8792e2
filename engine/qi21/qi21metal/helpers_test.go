package qi21metal

import (
	"math"
	"os"
	"testing"

	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/engine/ml/cpu"
	"easel/engine/qi21"
	"easel/internal/golden"
	"easel/internal/testdevice"
	"easel/internal/tinymodel"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// emuDevice returns the emulated device, skipping only when clang is not installed.
func emuDevice(t testing.TB) device.Device {
	t.Helper()
	return testdevice.Device(t, emu.Options{})
}

func TestMain(m *testing.M) {
	code := m.Run()
	tinymodel.RemoveAll()
	os.Exit(code)
}

// tinyModel converts the tiny snapshot with profile (q8: q8_2f block projections; cortiq: q4tp),
// maps the .cmf and loads the transformer on the CPU backend.
func tinyModel(t testing.TB, profile convert.Profile) (*qi21.Model, *cmf.File) {
	t.Helper()
	f := tinymodel.Open(t, convert.Options{Profile: profile, NoVision: true})
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
		g, err := golden.LoadDiT(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		dc := &ditCase{name: g.Name, c: g.Case, text: g.Text, latents: g.Latents, sigmas: g.Sigmas}
		if dc.layout, err = qi21.NewLayout(g.Mask, g.Shapes); err != nil {
			t.Fatal(err)
		}
		out = append(out, dc)
	}
	return out
}

// conditions is the number of condition images in the case's prefix.
func (dc *ditCase) conditions() int { return len(dc.layout.ImageShapes) - 1 }

// pickDiT is the case a test needs, chosen by what it holds, never by position: the first (in name
// order) that better ranks highest. The public set has three cases, another folder may have one.
func pickDiT(t testing.TB, what string, better func(a, b *ditCase) bool) *ditCase {
	t.Helper()
	cases := loadDiTCases(t)
	best := cases[0]
	for _, dc := range cases[1:] {
		if better(dc, best) {
			best = dc
		}
	}
	t.Logf("case %s: %s (%d condition images, prefix %d rows, target %d rows)", best.name, what, best.conditions(), best.layout.PrefixLen, best.layout.T)
	return best
}

// mostConditions is the dit case with the most condition images (the longest prefix among equals).
func mostConditions(t testing.TB) *ditCase {
	t.Helper()
	return pickDiT(t, "the most condition images", func(a, b *ditCase) bool {
		if a.conditions() != b.conditions() {
			return a.conditions() > b.conditions()
		}
		return a.layout.PrefixLen > b.layout.PrefixLen
	})
}

// fewestConditions is the dit case with the fewest condition images (the shortest prefix among
// equals): the cheapest.
func fewestConditions(t testing.TB) *ditCase {
	t.Helper()
	return pickDiT(t, "the fewest condition images", func(a, b *ditCase) bool {
		if a.conditions() != b.conditions() {
			return a.conditions() < b.conditions()
		}
		return a.layout.PrefixLen < b.layout.PrefixLen
	})
}

// midSigma is a σ from the middle of the case's list.
func (dc *ditCase) midSigma() float32 { return dc.sigmas[len(dc.sigmas)/2] }

// lastSigma is the case's last (smallest) σ.
func (dc *ditCase) lastSigma() float32 { return dc.sigmas[len(dc.sigmas)-1] }

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
