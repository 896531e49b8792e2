package qi21

import (
	"math/rand/v2"
	"testing"

	"easel/internal/golden"
)

// randomLayout draws 0–3 condition images of random even sizes with random text runs around
// them, then the target's slots.
func randomLayout(t *testing.T, rng *rand.Rand) *Layout {
	t.Helper()
	var mask []bool
	var shapes [][2]int
	text := func() {
		for n := rng.IntN(4); n > 0; n-- {
			mask = append(mask, false)
		}
	}
	evenSide := func() int { return 2 * (1 + rng.IntN(3)) }
	for k := rng.IntN(4); k > 0; k-- {
		text()
		h, w := evenSide(), evenSide()
		shapes = append(shapes, [2]int{h, w})
		for s := 0; s < h*w/4; s++ {
			mask = append(mask, true)
		}
	}
	text()
	h, w := evenSide(), evenSide()
	shapes = append(shapes, [2]int{h, w})
	for s := 0; s < h*w/4; s++ {
		mask = append(mask, true)
	}
	lay, err := NewLayout(mask, shapes)
	if err != nil {
		t.Fatalf("layout %v %v: %v", mask, shapes, err)
	}
	return lay
}

func randomValues(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// TestPrefillStepEqualsForward: for random layouts, two programs live at once (as under CFG),
// and every step's velocity equals the target rows of one uncached Forward: within float32
// rounding (1e-5) with the float32 cache, within the reference budget (1e-4) with the half one
// (measured: at most 3.4e-7 and 1.4e-5 over these trials).
func TestPrefillStepEqualsForward(t *testing.T) {
	for _, floatKV := range []bool{true, false} {
		bound := map[bool]float64{true: 1e-5, false: parityBound}[floatKV]
		t.Run(map[bool]string{true: "float32 K/V", false: "half K/V"}[floatKV], func(t *testing.T) {
			m := loadModel(t, 0)
			m.FloatKV = floatKV
			prefillStepEqualsForward(t, m, bound)
		})
	}
}

func prefillStepEqualsForward(t *testing.T, m *Model, bound float64) {
	c := m.Config
	rng := rand.New(rand.NewPCG(21, 1))
	var worst float64
	defer func() { t.Logf("largest cached vs uncached relative error %.3g", worst) }()
	for trial := 0; trial < 12; trial++ {
		type prompt struct {
			lay        *Layout
			text, lats []float32
			prog       *Program
		}
		var ps []prompt
		for k := 0; k < MaxPrograms; k++ {
			lay := randomLayout(t, rng)
			p := prompt{lay: lay, text: randomValues(rng, lay.TextLen*c.ContextDim), lats: randomValues(rng, lay.Latents*c.InChannels)}
			var err error
			if p.prog, err = m.Prefill(t.Context(), lay, p.text, p.lats[:lay.CondLatents()*c.InChannels]); err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		}
		if _, err := m.Prefill(t.Context(), ps[0].lay, ps[0].text, ps[0].lats[:ps[0].lay.CondLatents()*c.InChannels]); err == nil {
			t.Fatal("a third live program was accepted")
		}
		for _, sigma := range []float32{0.9, 0.35} {
			for k, p := range ps {
				full, err := m.Forward(t.Context(), p.lay, p.text, p.lats, sigma)
				if err != nil {
					t.Fatal(err)
				}
				target := p.lats[p.lay.CondLatents()*c.InChannels:]
				got, err := m.Step(t.Context(), p.prog, target, sigma)
				if err != nil {
					t.Fatal(err)
				}
				want := full[p.lay.PrefixLen*c.OutChannels:]
				e := golden.RelErr(got, want)
				worst = max(worst, e)
				if e > bound {
					t.Errorf("trial %d prompt %d (shapes %v, %d text rows) σ=%v: cached vs uncached relative error %.3g", trial, k, p.lay.ImageShapes, p.lay.TextRows(), sigma, e)
				}
			}
		}
		for _, p := range ps {
			m.Release(p.prog)
		}
	}
}
