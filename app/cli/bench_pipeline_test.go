package cli

import (
	"encoding/json"
	"testing"
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
