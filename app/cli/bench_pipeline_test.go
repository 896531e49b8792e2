package cli

import (
	"encoding/json"
	"image"
	"testing"

	"easel/app/memplan"
	"easel/engine/pipeline"
	"easel/engine/qi21"
	"easel/engine/qi21/qi21metal"
)

// easel bench pipeline runs the whole pipeline on a model file and reports every stage's time
// and resident memory, the peak and the planner's prediction in the JSON keys the issue names.
func TestBenchPipelineReportsStagesPeakAndPrediction(t *testing.T) {
	model := tinyCMF(t)
	code, out, errOut := run("bench", "pipeline", "--model", model, "--size", "64x64", "--steps", "1", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Stages    map[string]float64 `json:"stages"`
		Peak      int64              `json:"peak_rss_bytes"`
		Predicted int64              `json:"predicted_peak_bytes"`
		Backend   string             `json:"backend"`
		Detail    []struct {
			Name    string `json:"name"`
			RSSEnd  int64  `json:"rss_end_bytes"`
			RSSMax  int64  `json:"rss_max_bytes"`
			FileMax int64  `json:"file_max_bytes"`
		} `json:"stage_detail"`
		Finite bool `json:"output_finite"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, s := range []string{"load", "encoding prompt", "prefill", "denoising", "decoding", "save"} {
		if _, ok := rep.Stages[s]; !ok {
			t.Errorf("no %q in stages %v", s, rep.Stages)
		}
	}
	if rep.Peak <= 0 || rep.Predicted <= 0 || rep.Backend == "" || !rep.Finite {
		t.Errorf("peak %d, predicted %d, backend %q, finite %v", rep.Peak, rep.Predicted, rep.Backend, rep.Finite)
	}
	if len(rep.Detail) < 5 {
		t.Errorf("stage detail for %d stages, want every stage: %+v", len(rep.Detail), rep.Detail)
	}
	for _, d := range rep.Detail {
		if d.RSSMax <= 0 || d.RSSEnd > d.RSSMax || d.FileMax > d.RSSMax {
			t.Errorf("stage %s: resident at end %d, highest %d, of it the file %d", d.Name, d.RSSEnd, d.RSSMax, d.FileMax)
		}
	}
	if code, _, _ := run("bench", "pipeline", "--size", "64x64"); code != ExitUsage {
		t.Errorf("neither --model nor --synthetic: exit %d, want %d", code, ExitUsage)
	}
}

// A 16 GB Mac with every network on Metal still fits the heaviest everyday request: 1024² with
// one 1024² condition image and CFG, as easel bench pipeline --predict-only plans it for the
// full-size model (the published geometry is the synthetic file's byte counts).
func TestMac16FitsA1024EditWithCFG(t *testing.T) {
	req := pipeline.Request{Prompt: "a lighthouse on a cliff at dusk, oil painting", NegativePrompt: "blurry",
		Width: 1024, Height: 1024, CFG: 4, Images: []*image.NRGBA{image.NewNRGBA(image.Rect(0, 0, 1024, 1024))}}
	plan, err := benchPlan(req, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Conditions) != 1 || plan.Conditions[0] != [2]int{1024, 1024} || !plan.CFG {
		t.Fatalf("plan %+v: want one 1024² condition image and CFG", plan)
	}
	mac := mac16Prediction(memplan.PublishedGeometry(), plan)
	for _, s := range mac.Stages {
		t.Logf("%-12s weights %s, working %s, crossing %s: %s", s.Name, memplan.GB(s.Weights), memplan.GB(s.Working), memplan.GB(s.Crossing), memplan.GB(memplan.Process+s.Total()))
	}
	t.Logf("16 GB Mac: peak %s while the %s runs, %s usable", memplan.GB(mac.Peak), mac.Largest().Name, memplan.GB(mac.Usable()))
	if !mac.Fits() {
		t.Errorf("a 16 GB Mac does not fit 1024² + one 1024² condition image + CFG: %s", mac.Explain())
	}
	// The device's own check before each text-encoder or VAE call also counts what the denoiser
	// holds on the device then: between its runs only its auxiliary weights (the weight arena
	// over the mapping is released after the last step and made again at the next prefill), so
	// each of those calls passes with room the denoiser's 3.9 GB of weights would not leave.
	c := qi21.PublishedConfig()
	g := memplan.PublishedGeometry()
	c.Layers, c.Heads, c.MLPRatio = g.Layers, g.Hidden/c.HeadDim, float64(g.MLPHidden)/float64(g.Hidden)
	between := qi21metal.AuxiliaryBytes(c, false) // the published DiT's block projections are q4tp
	var dit int64
	for _, s := range mac.Stages {
		if s.Name == "denoiser" {
			dit = s.Weights
		}
	}
	if between <= 0 || between > dit/100 {
		t.Fatalf("the denoiser holds %s between runs, its weights are %s: not the small auxiliary buffer", memplan.GB(between), memplan.GB(dit))
	}
	for _, s := range mac.Stages {
		if s.Name == "denoiser" {
			continue
		}
		held := s.Weights + s.Working + mac.LoRA + between
		t.Logf("%-12s device check: %s with the denoiser's %s between runs (%s if it kept its weights), of the %s working set",
			s.Name, memplan.GB(held), memplan.GB(between), memplan.GB(held-between+dit), memplan.GB(mac16WorkingSet))
		if held > mac16WorkingSet {
			t.Errorf("the %s's device check would decline: %s with what the denoiser holds between runs, more than the %s working set", s.Name, memplan.GB(held), memplan.GB(mac16WorkingSet))
		}
	}
}
