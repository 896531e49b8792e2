package memplan

import (
	"fmt"

	"easel/engine/qi21"
	"easel/engine/qi21/qi21metal"
	"math"
	"testing"
)

// The prefix K/V and activation counts follow the pipeline's rules: prefix × layers × 2 × hidden
// half values per program, and rows × (6·hidden + 2·MLP) float32 plus the score scratch.
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
			wantKV := int64(c.prefix) * 32 * 2 * 4096 * 2
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
			var largest int64
			for _, s := range p.Stages {
				largest = max(largest, s.Weights+s.Working+s.Crossing)
			}
			if want := Process + largest; p.Peak != want {
				t.Errorf("peak %d, want the process + the largest stage = %d", p.Peak, want)
			}
		})
	}
}

// The VAE decodes in one piece when that fits a quarter of the budget, as the pipeline chooses
// (1024² counts 3.3 GB: one piece on a 16 GB machine), else in 32² tiles (792 MB).
func TestVAEPeakFollowsTheTiling(t *testing.T) {
	for _, c := range []struct {
		side   int
		budget int64
		wantMB float64
	}{{1024, 16e9, 3326}, {1024, 8e9, 792}, {2048, 16e9, 792}, {256, 16e9, 208}} {
		got := float64(decodePeak(c.side/16, c.side/16, c.budget)) / 1e6
		if math.Abs(got-c.wantMB)/c.wantMB > 0.1 {
			t.Errorf("decode %d² on %d GB: %.0f MB, want about %.0f", c.side, c.budget/1e9, got, c.wantMB)
		}
	}
}

// A plan that does not fit gets a smaller size of the same shape that does; nothing fits a
// budget smaller than the weights.
func TestLargestFittingKeepsTheAspectAndFits(t *testing.T) {
	g := PublishedGeometry()
	plan := Plan{Width: 2752, Height: 1536, CFG: true}
	budget := int64(10e9)
	if Predict(g, plan, budget).Fits() {
		t.Fatal("test premise: 2K 16:9 with CFG should not fit 10 GB")
	}
	w, h, ok := LargestFitting(g, plan, budget)
	if !ok {
		t.Fatal("no size fits 10 GB")
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
	if _, _, ok := LargestFitting(g, plan, 7e9); ok {
		t.Error("a size was suggested for a budget smaller than the text encoder's weights")
	}
}

func TestUnknownBudgetFits(t *testing.T) {
	if !Predict(PublishedGeometry(), Plan{Width: 4096, Height: 4096}, 0).Fits() {
		t.Error("with no known budget the prediction should not block generation")
	}
}

// Only the running network's weights count towards the peak: the text encoder's stage holds its
// projections but not the token embedding (a prompt reads a few of its rows), the vision tower
// only with condition images, and no stage holds two networks.
func TestStagesHoldOneNetworkEach(t *testing.T) {
	g := PublishedGeometry()
	w := map[string]int64{}
	for _, c := range g.Weights {
		w[c.Name] = c.Bytes
	}
	t2i := Predict(g, Plan{Width: 256, Height: 256}, 24e9)
	if got := t2i.Stages[0]; got.Name != "text encoder" || got.Weights != w["te"]-g.TextEmbedding-g.TextHead {
		t.Errorf("text-to-image text encoder stage %+v: want te less the embedding and the language head, %d", got, w["te"]-g.TextEmbedding-g.TextHead)
	}
	if t2i.Largest().Name != "text encoder" || t2i.Peak >= t2i.Weights {
		t.Errorf("256² peak %d at %q: want the text encoder's stage, far below all weights %d", t2i.Peak, t2i.Largest().Name, t2i.Weights)
	}
	ti2i := Predict(g, Plan{Width: 512, Height: 512, Conditions: [][2]int{{512, 512}}}, 24e9)
	if got := ti2i.Stages[0].Weights; got != w["te"]-g.TextEmbedding-g.TextHead+w["vis"] {
		t.Errorf("with a condition image the text encoder stage maps %d, want te less the embedding plus vis", got)
	}
	names := []string{}
	for _, s := range ti2i.Stages {
		names = append(names, s.Name)
		if s.Weights > max(w["te"]+w["vis"], w["dit"], w["vae"]) {
			t.Errorf("stage %s holds %d bytes of weights: more than one network", s.Name, s.Weights)
		}
	}
	if fmt.Sprint(names) != "[text encoder VAE encoder denoiser VAE decoder]" {
		t.Errorf("stages %v", names)
	}
	// The cache is half by default: half a float32 one.
	half := Predict(g, Plan{Width: 1024, Height: 1024, Conditions: [][2]int{{1024, 1024}}}, 24e9)
	full := Predict(g, Plan{Width: 1024, Height: 1024, Conditions: [][2]int{{1024, 1024}}, KVBytesPerValue: 4}, 24e9)
	if 2*half.KVBytes() != full.KVBytes() {
		t.Errorf("half K/V %d, float32 %d", half.KVBytes(), full.KVBytes())
	}
}

// On the Metal device each program holds its own buffers: two under CFG, without the Go heap's
// headroom.
func TestMetalPlanCountsDeviceBuffersPerProgram(t *testing.T) {
	g := PublishedGeometry()
	plan := Plan{Width: 1024, Height: 1024, CFG: true, Metal: true}
	p := Predict(g, plan, 12e9)
	c := qi21.PublishedConfig()
	per := qi21metal.PlanProgramFor(c, TextRows(0), 64*64)
	if p.Activations != 2*per {
		t.Errorf("Metal activations %d, want two programs' device buffers %d", p.Activations, 2*per)
	}
	for _, s := range p.Stages {
		if s.Name == "denoiser" && s.Working != 2*per {
			t.Errorf("denoiser stage working set %d, want %d", s.Working, 2*per)
		}
	}
}

// A batch holds what it holds at once: the denoiser's stage keeps the VAE decoder beside it
// (each image is decoded as it finishes, the programs stay for the next) and the finished images;
// the text encoder's stage is the single image's.
func TestBatchCountsTheDecoderBesideTheDenoiserAndTheFinishedImages(t *testing.T) {
	g := PublishedGeometry()
	var vae int64
	for _, c := range g.Weights {
		if c.Name == "vae" {
			vae += c.Bytes
		}
	}
	for _, metal := range []bool{false, true} {
		one := Predict(g, Plan{Width: 1024, Height: 1024, Metal: metal}, 24e9)
		if same := Predict(g, Plan{Width: 1024, Height: 1024, Metal: metal, Count: 1}, 24e9); same.Peak != one.Peak {
			t.Errorf("metal %v: a batch of 1 predicts %d, one image %d", metal, same.Peak, one.Peak)
		}
		four := Predict(g, Plan{Width: 1024, Height: 1024, Metal: metal, Count: 4}, 24e9)
		d1, d4 := one.Stages[1], four.Stages[1]
		dec1 := one.Stages[2]
		if d4.Weights != d1.Weights+vae || d4.Working != d1.Working+dec1.Working {
			t.Errorf("metal %v: batch denoiser stage %+v; one image's %+v and decoder %+v", metal, d4, d1, dec1)
		}
		if got, want := d4.Crossing-d1.Crossing, 3*BatchImageBytes(1024, 1024); got != want {
			t.Errorf("metal %v: the batch's stage holds %d bytes of finished images, want %d", metal, got, want)
		}
		if four.Stages[0] != one.Stages[0] || four.Peak < one.Peak {
			t.Errorf("metal %v: text encoder %+v vs %+v; peaks %d vs %d", metal, four.Stages[0], one.Stages[0], four.Peak, one.Peak)
		}
	}
}
