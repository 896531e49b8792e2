package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/internal/tinymodel"
)

// bench describe on a model file reports the prefill, the token rate and the bytes a token reads
// — every layer projection and the head (the embedding, tied in the tiny model) as the file holds
// them — with the copy loop's rate measured in the same run; without a model it refuses.
func TestBenchDescribeReportsBytesPerToken(t *testing.T) {
	model := tinymodel.Path(t, convert.Options{Profile: convert.ProfileCortiq})
	code, out, errOut := run("bench", "describe", "--model", model, "--tokens", "4", "--prompt-tokens", "8", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r describeBenchReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	f, err := cmf.Open(model)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want int64
	for _, e := range f.Entries() {
		proj := strings.HasPrefix(e.Name, "te.layers.") && strings.HasSuffix(e.Name, "_proj.weight")
		if proj || e.Name == "te.embed_tokens.weight" {
			want += int64(e.Size)
		}
	}
	if r.WeightBytesToken != want || r.Layers != 2 || r.Tokens != 4 || r.PrefillSeconds <= 0 || r.TokenMS <= 0 || r.CopyGBs <= 0 ||
		r.RatioToCopy != r.StreamGBs/r.CopyGBs || r.Goal != 0.6 {
		t.Errorf("report %+v; want %d weight bytes per token", r, want)
	}
	if code, _, _ := run("bench", "describe"); code != ExitUsage {
		t.Errorf("no model: exit %d, want %d", code, ExitUsage)
	}
	if code, _, errOut := run("bench", "describe", "--model", tinymodel.WithoutHead(t, convert.Options{Profile: convert.ProfileCortiq})); code != ExitModelInvalid || !strings.Contains(errOut, "easel convert") {
		t.Errorf("a file without the head: exit %d, %s", code, errOut)
	}
}
