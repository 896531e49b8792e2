package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// `easel studio status --json` lists the joined Mac (idle, its model) and the queue; a wrong
// token, a missing one and an open address without one are refused with what to do.
func TestStudioStatusAndRefusals(t *testing.T) {
	model := tinyCMF(t)
	url, _ := startStudio(t, model, time.Minute, 1)
	code, stdout, stderr := run("studio", "status", url, "--token", studioTestToken, "--json")
	if code != ExitOK {
		t.Fatalf("status: exit %d: %s", code, stderr)
	}
	var st struct {
		Workers []map[string]any `json:"workers"`
		Queued  *int             `json:"queued"`
	}
	if err := json.Unmarshal([]byte(stdout), &st); err != nil {
		t.Fatalf("status --json: %v: %s", err, stdout)
	}
	if len(st.Workers) != 1 || st.Queued == nil || *st.Queued != 0 {
		t.Fatalf("status %s: want one worker and 0 queued", stdout)
	}
	w := st.Workers[0]
	for field, want := range map[string]any{"name": "mac-1", "model": filepath.Base(model), "state": "idle", "done": 0.0, "step": 0.0, "steps": 0.0} {
		if w[field] != want {
			t.Errorf("worker %s = %v, want %v", field, w[field], want)
		}
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"studio", "status", url, "--token", "studio-test-token-wrong-one"}, "refused the token"},
		{[]string{"studio", "status", url}, "wants a token"},
		{[]string{"generate", "--studio", url, "--token", "studio-test-token-wrong-one", "--model", model, "--prompt", "x", "--size", "32x32"}, "refused the token"},
		{[]string{"studio", "hub", "--listen", "0.0.0.0:0", "--data", t.TempDir()}, "--token"},
		{[]string{"studio", "join", url, "--token", studioTestToken}, "--model is required"},
	} {
		code, _, stderr := run(tc.args...)
		if code == ExitOK || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want a refusal saying %q", tc.args, code, stderr, tc.want)
		}
	}
}
