package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
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
		Disk    struct {
			Free  uint64 `json:"free_at_start_bytes"`
			Limit int64  `json:"limit_bytes"`
		} `json:"disk"`
	}
	if err := json.Unmarshal([]byte(stdout), &st); err != nil {
		t.Fatalf("status --json: %v: %s", err, stdout)
	}
	if len(st.Workers) != 1 || st.Queued == nil || *st.Queued != 0 {
		t.Fatalf("status %s: want one worker and 0 queued", stdout)
	}
	if st.Disk.Free == 0 || st.Disk.Limit <= 0 || uint64(st.Disk.Limit) > st.Disk.Free {
		t.Errorf("status %s: want the hub's disk (its free space at start, and its share of it)", stdout)
	}
	if code, text, _ := run("studio", "status", url, "--token", studioTestToken); code != ExitOK || !strings.Contains(text, "hub disk:") {
		t.Errorf("status: exit %d, %q: want a line on the hub's disk", code, text)
	}
	if code, text, stderr := run("studio", "purge", url, "--token", studioTestToken); code != ExitOK || !strings.Contains(text, "the queue is empty: 0 jobs") {
		t.Errorf("purge: exit %d, %q %s", code, text, stderr)
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
		{[]string{"studio", "cancel", url, "--token", studioTestToken}, "give the batch"},
		{[]string{"studio", "cancel", url, "0123456789abcdef", "--token", studioTestToken}, "has no jobs in the queue"},
		{[]string{"studio", "hub", "--listen", "127.0.0.1:0", "--data", t.TempDir(), "--max-store", "1000"}, "free"},
		{[]string{"studio", "hub", "--listen", "127.0.0.1:0", "--data", t.TempDir(), "--token", studioTestToken, "--worker-token", studioTestToken}, "--worker-token"},
	} {
		code, _, stderr := run(tc.args...)
		if code == ExitOK || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want a refusal saying %q", tc.args, code, stderr, tc.want)
		}
	}
}

// `easel studio hub --model` renders too: a batch with no other Mac comes back from the hub's own
// worker; Ctrl-C stops it cleanly.
func TestStudioHubRendersToo(t *testing.T) {
	if testing.Short() {
		t.Skip("renders tiny images")
	}
	model := tinyCMF(t)
	urls := make(chan string, 1)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	oldListening, oldInterrupt := studioHubListening, studioInterrupt
	studioHubListening = func(u string) { urls <- u }
	studioInterrupt = func() (context.Context, context.CancelFunc) { return ctx, stop }
	defer func() { studioHubListening, studioInterrupt = oldListening, oldInterrupt }()
	hubDone := make(chan int, 1)
	var hubErr bytes.Buffer
	go func() {
		hubDone <- Run([]string{"studio", "hub", "--listen", "127.0.0.1:0", "--token", studioTestToken, "--data", t.TempDir(),
			"--model", model, "--backend", "cpu"}, io.Discard, &hubErr)
	}()
	var url string
	select {
	case url = <-urls:
	case code := <-hubDone:
		t.Fatalf("the hub exited %d: %s", code, hubErr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("the hub did not start within 30 s")
	}
	// the hub's worker has joined once the status lists it (a bounded wait on the hub's state)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, out, _ := run("studio", "status", url, "--token", studioTestToken, "--json")
		if strings.Contains(out, `-hub"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hub's own worker never joined: %s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	dir := t.TempDir()
	code, stdout, stderr := run("generate", "--studio", url, "--token", studioTestToken, "--model", model, "--prompt", "a lighthouse",
		"--size", "32x32", "--steps", "2", "--seed", "5", "--count", "2", "--out", filepath.Join(dir, "h.png"), "--json")
	if code != ExitOK {
		t.Fatalf("generate --studio: exit %d: %s", code, stderr)
	}
	saved := 0
	for _, ev := range jsonLines(t, stdout) {
		if ev["stage"] == "saved" {
			saved++
			if w, _ := ev["worker"].(string); !strings.HasSuffix(w, "-hub") || ev["attempt"].(float64) != 1 {
				t.Errorf("saved by %v attempt %v, want the hub's own worker, attempt 1", ev["worker"], ev["attempt"])
			}
		}
	}
	if saved != 2 {
		t.Errorf("%d images saved, want 2", saved)
	}
	stop()
	select {
	case code := <-hubDone:
		if code != ExitOK {
			t.Errorf("the hub exited %d after Ctrl-C: %s", code, hubErr.String())
		}
	case <-time.After(30 * time.Second):
		t.Error("the hub did not stop within 30 s of Ctrl-C")
	}
}
