package unfinished

import (
	"path/filepath"
	"testing"

	"easel/app/activity"
	"easel/app/checkpoint"
	"easel/app/compose"
	"easel/app/settings"
	"easel/engine/pipeline"
)

// TestSleepWritesTheRunningJobsCheckpoint: while a kept job runs, the Mac's will-sleep callback
// (activity.WillSleep, which the darwin observer calls) returns only once the job's newest state
// is in its checkpoint file; after the job's last step it is no longer called.
func TestSleepWritesTheRunningJobsCheckpoint(t *testing.T) {
	t.Cleanup(activity.DidWake)
	dir := t.TempDir()
	d := compose.NewDraft(settings.Settings{})
	d.Prompt, d.Size, d.CustomW, d.CustomH, d.Steps, d.Model = "a fox", compose.SizeExact, 64, 64, 2, filepath.Join(dir, "model.cmf")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	k, err := s.Add(d, 7, "a fox", "")
	if err != nil {
		t.Fatal(err)
	}
	job, err := d.Job(7)
	if err != nil {
		t.Fatal(err)
	}
	before := activity.Sleepers()
	step := k.OnStep(&job.Request, "fp")
	state := func(n int) pipeline.StepState {
		return pipeline.StepState{Images: 1, Step: n, Steps: 2, Sigmas: []float32{1, 0.5, 0}, Latents: []float32{float32(n), 2, 3, 4}}
	}
	step(state(1))
	if activity.Sleepers() != before+1 {
		t.Fatalf("the running job's flush is not registered (%d sleepers, want %d)", activity.Sleepers(), before+1)
	}
	activity.WillSleep()
	c, err := checkpoint.Read(k.Writer().Path())
	if err != nil || c.Step != 1 {
		t.Fatalf("when WillSleep returned the checkpoint held %v, %v; want step 1", c, err)
	}
	step(state(2))
	if activity.Sleepers() != before {
		t.Errorf("after the last step the job's flush is still registered")
	}
	if err := k.Done(); err != nil {
		t.Fatal(err)
	}
}
