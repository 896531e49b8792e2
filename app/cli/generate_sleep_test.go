package cli

import (
	"path/filepath"
	"testing"

	"easel/app/activity"
	"easel/app/checkpoint"
)

// TestGenerateCheckpointWrittenBeforeSleep: while `easel generate --checkpoint` runs, the Mac's
// sleep notice (activity.WillSleep, which the macOS power observer calls in the command-line
// process too) returns only once the checkpoint on disk holds the run's newest state; after the
// run the command no longer listens, and the image is saved with the checkpoint gone.
func TestGenerateCheckpointWrittenBeforeSleep(t *testing.T) {
	t.Cleanup(activity.DidWake)
	// Every step's state is written (the steps wait for the disk), and the run stalls on its
	// next --json line while the notice is handled: the newest state offered is then a known one.
	t.Setenv(EveryStepEnv, "1")
	model := tinyCMF(t)
	dir := t.TempDir()
	ck := filepath.Join(dir, "run.ckpt")
	out := filepath.Join(dir, "out.png")
	before := activity.Sleepers()
	const at = 4
	type seen struct {
		sleepers int
		ck       *checkpoint.Checkpoint
		err      error
	}
	got := make(chan seen, 1)
	var asked bool
	done, stderr := generateLive([]string{"generate", "--model", model, "--prompt", "a lighthouse", "--size", "64x64",
		"--steps", "8", "--seed", "5", "--backend", "cpu", "--checkpoint", ck, "--out", out, "--json"},
		func(ev map[string]any) {
			if asked || ev["stage"] != "denoising" || ev["step"] != float64(at) {
				return
			}
			asked = true
			// Step `at` is reported; its state is offered right after. The run waits on this
			// line's reader (here) before it reports anything more.
			s := seen{sleepers: activity.Sleepers()}
			activity.WillSleep()
			s.ck, s.err = checkpoint.Read(ck)
			activity.DidWake()
			got <- s
		})
	if code := <-done; code != ExitOK {
		t.Fatalf("generate --checkpoint: exit %d: %s", code, stderr)
	}
	var s seen
	select {
	case s = <-got:
	default:
		t.Fatalf("the run never reported step %d", at)
	}
	if s.sleepers != before+1 {
		t.Errorf("%d sleep listeners while the run went on, want %d (the run's checkpoint flush)", s.sleepers, before+1)
	}
	if s.err != nil || s.ck.Step < at-1 {
		t.Errorf("when the sleep notice returned the checkpoint held %v, %v; want the state of step %d or later", s.ck, s.err, at-1)
	}
	if n := activity.Sleepers(); n != before {
		t.Errorf("%d sleep listeners after the run, want %d", n, before)
	}
	if _, err := checkpoint.Read(ck); err == nil {
		t.Error("the checkpoint is still there after the image was saved")
	}
	if len(pixelsOf(t, out)) == 0 {
		t.Error("the image is empty")
	}
}
