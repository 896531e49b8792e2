package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"easel/app/jobs"
	"easel/app/serve"
	"easel/engine/pipeline"
)

// holdGen runs the model, except that every run stops at step 2 and waits there until its job is
// stopped (a server that is killed mid-job).
type holdGen struct {
	inner   jobs.Generator
	reached atomic.Bool
}

func (g *holdGen) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	on := req.OnStep
	req.OnStep = func(s pipeline.StepState) {
		if on != nil {
			on(s)
		}
		if s.Step == 2 {
			g.reached.Store(true)
			<-ctx.Done()
		}
	}
	return g.inner.Run(ctx, req, events)
}

// postCtx sends body to url with ctx (cancelling it is the client going away).
func postCtx(ctx context.Context, url string, body []byte) (*http.Response, error) {
	req, _ := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return http.DefaultClient.Do(req)
}

// ckFolders are the request folders in the checkpoint folder.
func ckFolders(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestAPIJobResumesAfterRestart: a server is stopped mid-job (held at step 2, its checkpoint
// written); a server started anew on the same folder answers the client's retry of the same
// request (seed -1) with the picture resumed — the seed the first run drew, bit for bit the
// picture of an uninterrupted run with that seed — and removes the checkpoint. A client that goes
// away has its checkpoint removed; one left by an earlier run that nobody asks for is removed
// after the grace period.
func TestAPIJobResumesAfterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	model := tinyModel(t)
	dir := t.TempDir()
	body := []byte(`{"prompt": "a lighthouse at dusk", "width": 64, "height": 64, "steps": 3, "seed": -1}`)

	held := &holdGen{inner: &jobs.ModelGenerator{Path: model}}
	first := newTestServer(t, held, serve.Config{Model: model, Checkpoints: dir, CheckpointGrace: time.Hour})
	ctx, leave := context.WithCancel(t.Context())
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		if resp, err := postCtx(ctx, first.URL+"/sdapi/v1/txt2img", body); err == nil {
			resp.Body.Close()
		}
	}()
	waitFor(t, "the first server's job at step 2", func() bool {
		return held.reached.Load() && len(ckFolders(dir)) == 1 && fileExists(filepath.Join(dir, ckFolders(dir)[0], "0.ckpt"))
	})

	// The server "restarts": a new one on the same folder (the first stays stopped mid-job).
	second := newTestServer(t, &jobs.ModelGenerator{Path: model}, serve.Config{Model: model, Checkpoints: dir, CheckpointGrace: time.Hour})
	var resumed genResponse
	if code := call(t, "POST", second.URL+"/sdapi/v1/txt2img", body, &resumed); code != 200 || len(resumed.Images) != 1 {
		t.Fatalf("the retry: %d, %d images: %s", code, len(resumed.Images), resumed.Info)
	}
	info := resumed.info(t)
	if !strings.Contains(jsonText(info["warnings"]), "image 1 resumed at step ") {
		t.Errorf("the retry does not say it resumed: %v", info["warnings"])
	}
	seedUsed := int64(info["seed"].(float64))
	fresh := newTestServer(t, &jobs.ModelGenerator{Path: model}, serve.Config{Model: model})
	var want genResponse
	plain, _ := json.Marshal(map[string]any{"prompt": "a lighthouse at dusk", "width": 64, "height": 64, "steps": 3, "seed": seedUsed})
	if code := call(t, "POST", fresh.URL+"/sdapi/v1/txt2img", plain, &want); code != 200 || len(want.Images) != 1 {
		t.Fatalf("the uninterrupted run: %d", code)
	}
	got, _ := decodeImage(t, resumed.Images[0])
	ref, _ := decodeImage(t, want.Images[0])
	if !bytes.Equal(got.Pix, ref.Pix) {
		t.Errorf("the resumed picture differs from an uninterrupted run with seed %d", seedUsed)
	}
	if left := ckFolders(dir); len(left) != 0 {
		t.Errorf("checkpoints left after the retry was answered: %v", left)
	}
	leave()
	<-gone

	// A client that goes away: its checkpoint is removed.
	held2 := &holdGen{inner: &jobs.ModelGenerator{Path: model}}
	third := newTestServer(t, held2, serve.Config{Model: model, Checkpoints: dir, CheckpointGrace: time.Hour})
	ctx, leave = context.WithCancel(t.Context())
	gone = make(chan struct{})
	go func() {
		defer close(gone)
		if resp, err := postCtx(ctx, third.URL+"/sdapi/v1/txt2img", body); err == nil {
			resp.Body.Close()
		}
	}()
	waitFor(t, "the job at step 2", func() bool { return held2.reached.Load() && len(ckFolders(dir)) == 1 })
	leave()
	<-gone
	waitFor(t, "the gone client's checkpoint removed", func() bool { return len(ckFolders(dir)) == 0 })

	// Left by an earlier run and asked for by nobody: removed after the grace period.
	os.MkdirAll(filepath.Join(dir, "0123456789abcdef0123456789abcdef"), 0o755)
	newTestServer(t, &fakeGen{}, serve.Config{Model: model, Checkpoints: dir, CheckpointGrace: time.Millisecond})
	waitFor(t, "the unclaimed checkpoint removed", func() bool { return len(ckFolders(dir)) == 0 })
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
