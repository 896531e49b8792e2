package jobs

import (
	"errors"
	"os"
	"strings"
	"testing"

	"easel/app/settings"
	"easel/engine/convert"
	"easel/engine/mmapfile"
	"easel/engine/pipeline"
	"easel/engine/pipeline/pipelinetest"
	"easel/internal/tinymodel"
)

// The model file is truncated while a job runs in the real queue (after step 1, before step 2,
// on the pipeline's goroutine, so the next read of the mapping faults): the job fails with the
// typed fault naming the file, its programs are released and the generator lets go of the
// mapping, the queue lists the failed job and runs the next one once the file is back, and the
// failed job has no image.
func TestTruncatedModelFileFailsTheJobAndTheQueueGoesOn(t *testing.T) {
	if testing.Short() {
		t.Skip("converts and runs the tiny model")
	}
	path := tinymodel.Copy(t, convert.Options{Profile: convert.ProfileCortiq})
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const keep = 4096 // the envelope's first page: every weight lies beyond it
	watch := &pipelinetest.Watch{}
	watch.BeforeStep = func(n int) {
		if n == 2 {
			if err := os.Truncate(path, keep); err != nil {
				t.Error(err)
			}
		}
	}
	gen := &ModelGenerator{Path: path, Backend: settings.BackendCPU,
		adjust: func(o pipeline.Options) pipeline.Options { return pipelinetest.WatchDenoiser(o, watch) }}
	defer gen.Close()

	// When the first job fails, the test looks at what it left and puts the file back, before the
	// worker takes the next job (the queue reports on its worker, between jobs).
	var liveAtFailure int
	var releasedAtFailure bool
	rec := newRecorder()
	q := New(gen, func(u Update) {
		if u.Event == nil && u.Job.ID == 1 && u.Job.State == Failed {
			liveAtFailure, releasedAtFailure = watch.Live(), gen.Released()
			if err := os.WriteFile(path, whole, 0o644); err != nil {
				t.Error(err)
			}
		}
		rec.notify(u)
	})
	defer q.Close()
	req := pipeline.Request{Prompt: "a red cube", Width: 64, Height: 64, Steps: 3, Seed: 7}
	first, _ := q.Submit(req, "truncated")
	second, _ := q.Submit(req, "after")

	j := <-rec.finished
	if j.ID != first || j.State != Failed {
		t.Fatalf("job %d ended %v (%v), want job %d failed", j.ID, j.State, j.Err, first)
	}
	var fault *mmapfile.FaultError
	if !errors.As(j.Err, &fault) {
		t.Fatalf("error %v (%T) is not a *mmapfile.FaultError", j.Err, j.Err)
	}
	if fault.Path != path || fault.Size != int64(len(whole)) || fault.Now != keep {
		t.Errorf("fault %+v: want %s, %d bytes mapped, %d now", fault, path, len(whole), keep)
	}
	msg := j.Err.Error()
	t.Log(msg)
	for _, want := range []string{path, "changed or became unreadable", "it is now 4.1 kB of " + mmapfile.ByteSize(int64(len(whole))), "reconnect the drive or choose the model again", "step 2 of 3"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	var pe *pipeline.ModelFileError
	if !errors.As(j.Err, &pe) {
		t.Errorf("error %T is not a *pipeline.ModelFileError", j.Err)
	}
	if j.Result != nil {
		t.Error("the failed job has an image")
	}
	if liveAtFailure != 0 || !releasedAtFailure {
		t.Errorf("at failure: %d programs live, generator released %v; want 0 and true", liveAtFailure, releasedAtFailure)
	}

	j = <-rec.finished
	if j.ID != second || j.State != Done || j.Result == nil {
		t.Fatalf("the next job %d ended %v (%v), want job %d done", j.ID, j.State, j.Err, second)
	}
	jobs := q.Jobs()
	if len(jobs) != 2 || jobs[0].State != Failed || jobs[0].Err == nil || jobs[1].State != Done {
		t.Errorf("queue after: %+v", jobs)
	}
	if watch.Live() != 0 {
		t.Errorf("%d programs live after both jobs", watch.Live())
	}
}
