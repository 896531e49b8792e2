package memplan

import (
	"fmt"
	"testing"

	"easel/engine/pipeline"
	"easel/engine/qwen3vl"
	"easel/engine/qwen3vl/qwen3vlmetal"
	"easel/engine/vae"
	"easel/engine/vae/vaemetal"
)

// mac16 is a 16 GB Mac: its physical memory and the GPU working set DeviceBudget estimates.
const (
	mac16Physical   = 16 << 30
	mac16WorkingSet = mac16Physical / 4 * 3
)

// On Metal the text encoder's, the VAE encoder's and the VAE decoder's working sets are exactly
// what the device's own checks count for the same shapes (qwen3vlmetal.PlanEncodeFor,
// vaemetal.PlanEncodeFor and PlanDecodeFor at the published geometry), the decode in the tiling
// the pipeline chooses from the CPU model's plan against a quarter of physical memory; the
// weights are the networks' own, read in place.
func TestMetalPlanCountsTheDevicePlans(t *testing.T) {
	tc, vc := qwen3vl.PublishedConfigs()
	cfg := vae.PublishedConfig()
	g := PublishedGeometry()
	w := map[string]int64{}
	for _, c := range g.Weights {
		w[c.Name] = c.Bytes
	}
	for _, plan := range []Plan{
		{Width: 1024, Height: 1024, PromptBytes: 400},
		{Width: 1024, Height: 1024, PromptBytes: 44, CFG: true, Conditions: [][2]int{{1024, 1024}}},
		{Width: 2048, Height: 2048, PromptBytes: 200, CFG: true},
		{Width: 1376, Height: 768, PromptBytes: 120, Conditions: [][2]int{{1376, 768}, {512, 512}}},
	} {
		t.Run(fmt.Sprintf("%d×%d, %d conditions", plan.Width, plan.Height, len(plan.Conditions)), func(t *testing.T) {
			plan.Metal = true
			p := Predict(g, plan, mac16WorkingSet)
			tokens := TextRows(plan.PromptBytes)
			var grids [][3]int
			var encode int64
			for _, c := range plan.Conditions {
				tokens += (c[0] / 32) * (c[1] / 32)
				grids = append(grids, [3]int{1, c[1] / 16, c[0] / 16})
				n, err := vaemetal.PlanEncodeFor(cfg, c[1], c[0], nil)
				if err != nil {
					t.Fatal(err)
				}
				encode = max(encode, n)
			}
			wantText := qwen3vlmetal.PlanEncodeFor(tc, &vc, tokens, grids)
			tiling, _, err := vae.ChooseTilingFor(cfg, plan.Height/16, plan.Width/16, mac16Physical/4)
			if err != nil {
				t.Fatal(err)
			}
			wantDecode, err := vaemetal.PlanDecodeFor(cfg, plan.Height/16, plan.Width/16, tiling)
			if err != nil {
				t.Fatal(err)
			}
			stages := map[string]Stage{}
			for _, s := range p.Stages {
				stages[s.Name] = s
			}
			te := w["te"] - g.TextEmbedding - g.TextHead
			if len(plan.Conditions) > 0 {
				te += w["vis"]
			}
			if s := stages["text encoder"]; s.Working != wantText || s.Weights != te || s.Crossing != 0 {
				t.Errorf("text encoder stage %+v: want working set %d (qwen3vlmetal.PlanEncodeFor), weights %d", s, wantText, te)
			}
			if s, ok := stages["VAE encoder"]; ok != (len(plan.Conditions) > 0) || ok && (s.Working != encode || s.Weights != w["vae"]) {
				t.Errorf("VAE encoder stage %+v (present %v): want working set %d (vaemetal.PlanEncodeFor), weights %d", s, ok, encode, w["vae"])
			}
			if s := stages["VAE decoder"]; s.Working != wantDecode || s.Weights != w["vae"] {
				t.Errorf("VAE decoder stage %+v: want working set %d (vaemetal.PlanDecodeFor, tiling %v), weights %d", s, wantDecode, tiling, w["vae"])
			}
			if s := stages["denoiser"]; s.Weights != w["dit"] {
				t.Errorf("denoiser stage holds %d bytes of weights, want the denoiser's %d alone", s.Weights, w["dit"])
			}
			if p.VAE != max(encode, wantDecode) {
				t.Errorf("VAE activations %d, want the larger device plan %d", p.VAE, max(encode, wantDecode))
			}
			t.Logf("text %s, VAE encode %s, decode %s (tiling %v); peak %s while the %s runs",
				GB(wantText), GB(encode), GB(wantDecode), tiling, GB(p.Peak), p.Largest().Name)
		})
	}
}

// The plan's shapes reach the device plans: a 2048² decode on a 16 GB Mac is tiled (the one-piece
// plan passes a quarter of its memory), a 1024² one is not, and a condition image's vision
// patches raise the text encoder's buffers.
func TestMetalPlanFollowsTheShapes(t *testing.T) {
	g := PublishedGeometry()
	cfg := vae.PublishedConfig()
	whole, err := vaemetal.PlanDecodeFor(cfg, 128, 128, nil)
	if err != nil {
		t.Fatal(err)
	}
	big := Predict(g, Plan{Width: 2048, Height: 2048, Metal: true}, mac16WorkingSet)
	if got := big.Stages[len(big.Stages)-1].Working; got >= whole {
		t.Errorf("2048² decode counts %s, not below the one-piece plan %s: not tiled", GB(got), GB(whole))
	}
	one, err := vaemetal.PlanDecodeFor(cfg, 64, 64, nil)
	if err != nil {
		t.Fatal(err)
	}
	small := Predict(g, Plan{Width: 1024, Height: 1024, Metal: true}, mac16WorkingSet)
	if got := small.Stages[len(small.Stages)-1].Working; got != one {
		t.Errorf("1024² decode counts %s, want the one-piece plan %s", GB(got), GB(one))
	}
	with := Predict(g, Plan{Width: 1024, Height: 1024, Metal: true, Conditions: [][2]int{{1024, 1024}}}, mac16WorkingSet)
	if with.Stages[0].Working <= small.Stages[0].Working {
		t.Errorf("text encoder with a 1024² condition image %s, without %s", GB(with.Stages[0].Working), GB(small.Stages[0].Working))
	}
}

// With the CPU backend every working set is float32 on the Go heap with its headroom (×2): the
// text encoder's rows × (5·4096 + 2·1024 + 3·12288) floats plus two cores' dequantization tiles
// and the 16 MB score scratch, or the vision tower's patches × (6·1152 + 2·4304) floats; the VAE's
// encode and decode as engine/vae's dry run counts them, the decode in the tiling the pipeline
// picks against a quarter of the budget.
func TestCPUPredictionFollowsTheHeapFormula(t *testing.T) {
	g := PublishedGeometry()
	for _, c := range []struct {
		plan   Plan
		budget int64
	}{
		{Plan{Width: 1024, Height: 1024, PromptBytes: 400}, 24e9},
		{Plan{Width: 1024, Height: 1024, PromptBytes: 44, CFG: true, Conditions: [][2]int{{1024, 1024}}}, 24e9},
		{Plan{Width: 2048, Height: 2048, PromptBytes: 200, Conditions: [][2]int{{512, 512}}}, 16e9},
	} {
		p := Predict(g, c.plan, c.budget)
		rows, patches := 40+c.plan.PromptBytes/4, 0
		for _, im := range c.plan.Conditions {
			rows += (im[0] / 32) * (im[1] / 32)
			patches += (im[0] / 16) * (im[1] / 16)
		}
		const score = 16 << 20
		text := int64(rows)*(5*4096+2*1024+3*12288)*4 + 2*256*12288*4 + score
		if len(c.plan.Conditions) > 0 {
			text = max(text, int64(patches)*(6*1152+2*4304)*4+score)
		}
		// The VAE: engine/vae's dry runs, the decode in the tiling the pipeline picks against a
		// quarter of the budget.
		cfg := vae.PublishedConfig()
		_, decode, err := vae.ChooseTilingFor(cfg, c.plan.Height/16, c.plan.Width/16, c.budget/4)
		if err != nil {
			t.Fatal(err)
		}
		var encode int64
		for _, im := range c.plan.Conditions {
			e, err := vae.PlanEncodeFor(cfg, im[1], im[0])
			if err != nil {
				t.Fatal(err)
			}
			encode = max(encode, e.PeakActivationBytes)
		}
		want := map[string]int64{"text encoder": 2 * text, "VAE encoder": 2 * encode, "VAE decoder": 2 * decode.PeakActivationBytes}
		for _, s := range p.Stages {
			if v, ok := want[s.Name]; ok && s.Working != v {
				t.Errorf("%d×%d: %s working set %d, want %d", c.plan.Width, c.plan.Height, s.Name, s.Working, v)
			}
		}
	}
}

// The sharp preview decodes on its own CPU VAE while the denoiser runs: its weights and its
// decode of the reduced grid (with the heap's headroom) join the denoiser's stage, on either
// backend, and nothing else moves.
func TestSharpPreviewJoinsTheDenoiserStage(t *testing.T) {
	g := PublishedGeometry()
	cfg := vae.PublishedConfig()
	for _, metal := range []bool{false, true} {
		plan := Plan{Width: 1024, Height: 1024, PromptBytes: 100, CFG: true, Metal: metal}
		off := Predict(g, plan, mac16WorkingSet)
		plan.SharpPreview = true
		on := Predict(g, plan, mac16WorkingSet)
		sh, sw := pipeline.SharpGrid(64, 64)
		dec, err := vae.PlanDecodeFor(cfg, sh, sw)
		if err != nil {
			t.Fatal(err)
		}
		for i := range on.Stages {
			a, b := off.Stages[i], on.Stages[i]
			if b.Name != "denoiser" {
				if a != b {
					t.Errorf("metal %v: %s stage moved with the sharp preview: %+v → %+v", metal, a.Name, a, b)
				}
				continue
			}
			if b.Working-a.Working != 2*dec.PeakActivationBytes || b.Weights-a.Weights != 662_200_000 || b.Crossing != a.Crossing {
				t.Errorf("metal %v: denoiser stage %+v → %+v: want +%d working (2 × the %d×%d decode), +the VAE's weights", metal, a, b, 2*dec.PeakActivationBytes, sh, sw)
			}
		}
	}
}

// A model file's own geometry sets its CPU working sets: the tiny reference model's text encoder
// and VAE count from its configs, not the published model's, so each stage counts less than half the published one's
// at the same size.
func TestCPUPredictionCountsTheOpenedModel(t *testing.T) {
	g, err := GeometryOf(tinyModel(t))
	if err != nil {
		t.Fatal(err)
	}
	plan := Plan{Width: 1024, Height: 1024, PromptBytes: 100, Conditions: [][2]int{{512, 512}}}
	tiny, pub := Predict(g, plan, 24e9), Predict(PublishedGeometry(), plan, 24e9)
	tc, vc := g.Text, g.Vision
	rows := 40 + 100/4 + 16*16
	text := int64(rows)*int64(3*tc.Hidden+2*tc.Heads*tc.HeadDim+2*tc.KVHeads*tc.HeadDim+3*tc.Intermediate)*4 +
		int64(2*256*max(tc.Intermediate, tc.Hidden)*4) + 16<<20
	text = max(text, int64(32*32)*int64(6*vc.Hidden+2*vc.Intermediate)*4+16<<20)
	_, decode, err := vae.ChooseTilingFor(g.VAE, 1024/g.VAE.Scale(), 1024/g.VAE.Scale(), 6e9)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"text encoder": 2 * text, "VAE decoder": 2 * decode.PeakActivationBytes}
	for i, s := range tiny.Stages {
		if v, ok := want[s.Name]; ok && s.Working != v {
			t.Errorf("tiny model: %s working set %d, want %d from its own configs", s.Name, s.Working, v)
		}
		if s.Working*2 > pub.Stages[i].Working {
			t.Errorf("tiny model: %s working set %d, more than half the published model's %d", s.Name, s.Working, pub.Stages[i].Working)
		}
	}
	t.Logf("1024² with a 512² condition image: tiny model %.2f GB, published %.2f GB", float64(tiny.Peak)/1e9, float64(pub.Peak)/1e9)
}

// A run that starts from an image (img2img, inpainting) encodes it at the output size before the
// denoiser runs: the VAE-encoder stage counts that encode (engine/vae's dry run on the CPU, with
// the heap's headroom; vaemetal's device plan on Metal), in the tiling the pipeline chooses
// against a quarter of physical memory (one piece for these sizes, tiles for the 2048² condition
// image), beside any condition image, and nothing of the prompt's moves (the start image is no
// condition: no vision patches, no prefix rows).
func TestAStartImageCountsItsEncode(t *testing.T) {
	g := PublishedGeometry()
	cfg := vae.PublishedConfig()
	for _, metal := range []bool{false, true} {
		for _, conds := range [][][2]int{nil, {{512, 512}}, {{2048, 2048}}} {
			plan := Plan{Width: 1024, Height: 768, PromptBytes: 100, CFG: true, Conditions: conds, Metal: metal}
			without := Predict(g, plan, mac16WorkingSet)
			plan.Init = true
			with := Predict(g, plan, mac16WorkingSet)
			encode := func(w, h int) int64 {
				if metal {
					tiling, _, err := vae.ChooseEncodeTilingFor(cfg, h, w, mac16Physical/4)
					if err != nil {
						t.Fatal(err)
					}
					n, err := vaemetal.PlanEncodeFor(cfg, h, w, nil)
					if tiling != nil {
						n, err = vaemetal.PlanEncodeFor(cfg, h, w, tiling)
					}
					if err != nil {
						t.Fatal(err)
					}
					return n
				}
				_, p, err := vae.ChooseEncodeTilingFor(cfg, h, w, mac16WorkingSet/4)
				if err != nil {
					t.Fatal(err)
				}
				return 2 * p.PeakActivationBytes
			}
			want := encode(1024, 768)
			for _, c := range conds {
				want = max(want, encode(c[0], c[1]))
			}
			var got *Stage
			for i, s := range with.Stages {
				if s.Name == "VAE encoder" {
					got = &with.Stages[i]
				}
			}
			if got == nil || got.Working != want || got.Weights != 662_200_000 {
				t.Errorf("metal %v, conditions %v: VAE encoder stage %+v, want working %d (the start image's encode or a larger condition's) and the VAE's weights", metal, conds, got, want)
			}
			if len(with.PrefixKV) != len(without.PrefixKV) || with.PrefixKV[0] != without.PrefixKV[0] || with.Stages[0] != without.Stages[0] {
				t.Errorf("metal %v, conditions %v: the start image moved the prompt's stages: %+v → %+v", metal, conds, without.Stages[0], with.Stages[0])
			}
			if with.VAE < want/2 {
				t.Errorf("metal %v, conditions %v: the VAE's peak %d leaves out the start image's encode %d", metal, conds, with.VAE, want)
			}
		}
	}
}
