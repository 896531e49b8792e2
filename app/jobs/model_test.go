package jobs

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"easel/app/preview"
	"easel/app/settings"
	"easel/engine/convert"
	"easel/engine/pipeline"
	"easel/internal/golden"
)

// The real generator, on the tiny reference model converted to a .cmf, makes an image through the
// queue: the model opens on the first job, events arrive with step previews, the job ends done.
func TestModelGeneratorRunsTheTinyModelThroughTheQueue(t *testing.T) {
	if testing.Short() {
		t.Skip("converts and runs the tiny model")
	}
	snap, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tiny.cmf")
	if _, err := convert.Convert(context.Background(), snap, path, convert.Options{Profile: convert.ProfileF16}); err != nil {
		t.Fatal(err)
	}
	proj, err := preview.Load(preview.TinyFile)
	if err != nil {
		t.Fatal(err)
	}
	gen := &ModelGenerator{Path: path}
	defer gen.Close()
	rec := newRecorder()
	q := New(gen, rec.notify)
	defer q.Close()
	id, err := q.Submit(pipeline.Request{Prompt: "a red cube", Width: 64, Height: 96, Steps: 2, Seed: 7, Preview: proj.Image}, "tiny")
	if err != nil {
		t.Fatal(err)
	}
	j := <-rec.finished
	if j.ID != id || j.State != Done {
		t.Fatalf("job %d ended %v: %v", j.ID, j.State, j.Err)
	}
	if b := j.Result.Image.Bounds(); b.Dx() != 64 || b.Dy() != 96 || j.Result.Seed != 7 {
		t.Errorf("image %v seed %d, want 64×96 seed 7", b, j.Result.Seed)
	}
	previews, last := 0, 0
	rec.mu.Lock()
	for _, u := range rec.updates {
		if u.Event != nil && u.Event.Stage == pipeline.StageDenoising && u.Event.Step > 0 {
			last = u.Event.Step
			if p := u.Event.Preview; p != nil && p.Image != nil {
				if b := p.Image.Bounds(); b.Dx() != 4 || b.Dy() != 6 {
					t.Errorf("preview %v, want one pixel per latent (4×6)", b)
				}
				previews++
			}
		}
	}
	rec.mu.Unlock()
	if last != 2 || previews == 0 {
		t.Errorf("last step event %d, %d previews; want step 2 and at least one preview", last, previews)
	}

	// Switching to a path that does not exist fails the next job with the path in the message;
	// switching back works again.
	missing := filepath.Join(t.TempDir(), "missing.cmf")
	gen.SetPath(missing)
	q.Submit(pipeline.Request{Prompt: "x", Width: 64, Height: 64, Steps: 2}, "missing")
	if j := <-rec.finished; j.State != Failed || j.Err == nil || !strings.Contains(j.Err.Error(), "missing.cmf") {
		t.Errorf("missing model: %v %v", j.State, j.Err)
	}
	gen.SetPath(path)
	q.Submit(pipeline.Request{Prompt: "x", Width: 64, Height: 64, Steps: 2}, "back")
	if j := <-rec.finished; j.State != Done {
		t.Errorf("after switching back: %v %v", j.State, j.Err)
	}
	if r := gen.BackendReason(); r == "" {
		t.Error("no sentence says where the denoiser ran")
	}

	// The backend setting reaches the next job: Metal where there is none fails with the reason
	// (as `easel generate --backend metal` does); CPU runs.
	if runtime.GOOS != "darwin" || runtime.GOARCH != "arm64" {
		gen.SetBackend(settings.BackendMetal)
		q.Submit(pipeline.Request{Prompt: "x", Width: 64, Height: 64, Steps: 2}, "metal")
		if j := <-rec.finished; j.State != Failed || j.Err == nil || !strings.Contains(j.Err.Error(), "Apple silicon") {
			t.Errorf("metal on %s/%s: %v %v", runtime.GOOS, runtime.GOARCH, j.State, j.Err)
		}
	}
	gen.SetBackend(settings.BackendCPU)
	q.Submit(pipeline.Request{Prompt: "x", Width: 64, Height: 64, Steps: 2}, "cpu")
	if j := <-rec.finished; j.State != Done {
		t.Errorf("cpu: %v %v", j.State, j.Err)
	}
}
