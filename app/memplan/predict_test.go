package memplan

import (
	"math"
	"testing"
)

// The prefix K/V and activation counts follow the pipeline's rules: prefix × layers × 2 × hidden
// float32 per program, and rows × (6·hidden + 2·MLP) float32 plus the score scratch.
func TestPredictCountsLikeThePipelineLedger(t *testing.T) {
	g := PublishedGeometry()
	cases := []struct {
		name       string
		plan       Plan
		prefix     int
		programs   int
		targetRows int
	}{
		{"t2i 1024²", Plan{Width: 1024, Height: 1024, PromptBytes: 400}, 140, 1, 4096},
		{"t2i 1024² CFG", Plan{Width: 1024, Height: 1024, PromptBytes: 400, CFG: true}, 140, 2, 4096},
		{"one condition 1024×1024", Plan{Width: 1024, Height: 1024, Conditions: [][2]int{{1024, 1024}}}, 40 + 4096, 1, 4096},
		{"2K 16:9, two conditions", Plan{Width: 2752, Height: 1536, Conditions: [][2]int{{1376, 768}, {1024, 1024}}}, 40 + 86*48 + 4096, 1, 172 * 96},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Predict(g, c.plan, 64e9)
			wantKV := int64(c.prefix) * 32 * 2 * 4096 * 4
			if len(p.PrefixKV) != c.programs {
				t.Fatalf("%d programs, want %d", len(p.PrefixKV), c.programs)
			}
			for i, kv := range p.PrefixKV {
				if kv != wantKV {
					t.Errorf("program %d K/V %d bytes, want %d", i, kv, wantKV)
				}
			}
			rows := max(c.prefix, c.targetRows)
			if want := int64(rows)*(6*4096+2*12288)*4 + 16<<20; p.Activations != want {
				t.Errorf("activations %d, want %d", p.Activations, want)
			}
			if want := p.Weights + p.KVBytes() + max(p.Activations, p.VAE); p.Peak != want {
				t.Errorf("peak %d, want weights + K/V + max(activations, VAE) = %d", p.Peak, want)
			}
		})
	}
}

// The VAE's decode peak is bounded by its tile: 1024² counts about the 564 MB the benchmark
// counted for the real decoder, and 2048² the same as one 32² tile (792 MB).
func TestVAEPeakFollowsTheTile(t *testing.T) {
	for _, c := range []struct {
		side   int
		wantMB float64
	}{{1024, 792}, {2048, 792}, {256, 208}} {
		got := float64(decodePeak(c.side/16, c.side/16)) / 1e6
		if math.Abs(got-c.wantMB)/c.wantMB > 0.1 {
			t.Errorf("decode %d²: %.0f MB, want about %.0f", c.side, got, c.wantMB)
		}
	}
}

// A plan that does not fit gets a smaller size of the same shape that does; nothing fits a
// budget smaller than the weights.
func TestLargestFittingKeepsTheAspectAndFits(t *testing.T) {
	g := PublishedGeometry()
	plan := Plan{Width: 2752, Height: 1536, CFG: true}
	budget := int64(16e9)
	if Predict(g, plan, budget).Fits() {
		t.Fatal("test premise: 2K 16:9 with CFG should not fit 16 GB")
	}
	w, h, ok := LargestFitting(g, plan, budget)
	if !ok {
		t.Fatal("no size fits 16 GB")
	}
	q := plan
	q.Width, q.Height = w, h
	if !Predict(g, q, budget).Fits() {
		t.Errorf("suggested %d×%d does not fit", w, h)
	}
	if w%32 != 0 || h%32 != 0 || w >= plan.Width || h >= plan.Height {
		t.Errorf("suggested %d×%d: want multiples of 32 smaller than %d×%d", w, h, plan.Width, plan.Height)
	}
	if r := float64(w) / float64(h); math.Abs(r-16.0/9) > 0.1 {
		t.Errorf("suggested %d×%d has aspect %.2f, want about 16:9", w, h, r)
	}
	if _, _, ok := LargestFitting(g, plan, 8e9); ok {
		t.Error("a size was suggested for a budget smaller than the weights")
	}
}

func TestUnknownBudgetFits(t *testing.T) {
	if !Predict(PublishedGeometry(), Plan{Width: 4096, Height: 4096}, 0).Fits() {
		t.Error("with no known budget the prediction should not block generation")
	}
}
