package keeping

import (
	"slices"
	"testing"

	"fyne.io/fyne/v2/test"

	"easel/app/compose"
	"easel/app/history"
	"easel/app/jobs"
	"easel/app/settings"
	"easel/app/unfinished"
	"easel/engine/convert"
	"easel/engine/pipeline"
	"easel/internal/tinymodel"

	"easel/ui/model"
)

// keptDraft is a small draft of the tiny model (its fingerprint is what checkpoints carry).
func keptDraft(t *testing.T, prompt string) compose.Draft {
	t.Helper()
	d := compose.NewDraft(settings.Settings{})
	d.Prompt, d.Size, d.CustomW, d.CustomH, d.Steps = prompt, compose.SizeExact, 64, 64, 3
	d.Model = tinymodel.Path(t, convert.Options{Profile: convert.ProfileF16})
	return d
}

func openStore(t *testing.T) *unfinished.Store {
	t.Helper()
	store, err := unfinished.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// queueKept keeps a job of prompt as the shell does when it queues it as id, and runs its first
// step steps through the request's OnStep (the checkpoints a run writes), each with latents.
func queueKept(t *testing.T, r *Region, id jobs.ID, prompt string, seed uint64, steps int, latents []float32) {
	t.Helper()
	d := keptDraft(t, prompt)
	job, err := d.Job(seed)
	if err != nil {
		t.Fatal(err)
	}
	req := job.Request
	k := r.Keep(d, seed, &req, nil)
	if k == nil || req.OnStep == nil {
		t.Fatal("a job of a readable model with a store is not kept")
	}
	r.KeptAs(id, k)
	for s := 1; s <= steps; s++ {
		k.Writer().Wait() // one write after another: each step's state is written
		req.OnStep(pipeline.StepState{Images: 1, Step: s, Steps: 3, Sigmas: []float32{1, 0.6, 0.3, 0}, Latents: latents})
	} // the last step's write may still be in flight: Close waits for it
}

// A job stopped by a quit stays kept with the step it reached (Close waits for the checkpoint
// write in flight), and the next session's offer resumes it from there: one row per job, the
// job queued with its checkpoint's latents and the kept job that goes on checkpointing it.
func TestQuitKeepsJobsAndTheOfferResumesThem(t *testing.T) {
	store := openStore(t)
	r, _, _ := newRegion(t, store)
	latents := []float32{0.25, -1.5, 3, 0.125}
	queueKept(t, r, 1, "a fox in snow", 12, 0, nil)
	// The crane's last checkpoint write is still in flight when Finish later closes the window.
	queueKept(t, r, 2, "a paper crane", 11, 2, latents)
	r.Close(false)
	left, err := store.List()
	if err != nil || len(left) != 2 || left[1].Checkpoint == nil || left[1].Checkpoint.Step != 2 {
		t.Fatalf("after Close the store keeps %d jobs (%v): %v; want the fox waiting and the crane at step 2", len(left), err, left)
	}

	next, _, f := newRegion(t, store)
	next.OfferResume()
	o := next.Offer()
	if o == nil || len(o.Rows.Objects) != 2 || o.ResumeAll.Text != "Resume 2 unfinished jobs" {
		t.Fatalf("the next session offers %v", o)
	}
	test.Tap(findButton(o.Rows.Objects[1], "Resume"))
	if len(f.submitted) != 1 {
		t.Fatalf("Resume on the crane's row queued %d jobs, want 1", len(f.submitted))
	}
	got := f.submitted[0]
	res := got.job.Request.Resume
	if got.draft.Prompt != "a paper crane" || got.seed != 11 || got.resumed == nil || res == nil || res.Step != 2 || !slices.Equal(res.Latents, latents) {
		t.Fatalf("resumed %q seed %d from %+v (kept job %v), want a paper crane, seed 11, step 2 with its latents", got.draft.Prompt, got.seed, res, got.resumed)
	}
	if len(o.Rows.Objects) != 1 {
		t.Errorf("after resuming one, %d rows are offered, want the other", len(o.Rows.Objects))
	}
	test.Tap(o.ResumeAll)
	if len(f.submitted) != 2 || f.submitted[1].draft.Prompt != "a fox in snow" || f.submitted[1].job.Request.Resume != nil {
		t.Errorf("Resume all queued %d jobs; the waiting one should start from its first step", len(f.submitted))
	}
	if left, _ := store.List(); len(left) != 2 {
		t.Errorf("resumed jobs stay kept until they end: %d kept, want 2", len(left))
	}
}

// A job that ended (finished with its image written, failed, or cancelled) is not kept: the next
// session offers nothing; Discard and quit lets the others go with the window.
func TestEndedAndDiscardedJobsAreNotKept(t *testing.T) {
	store := openStore(t)
	r, _, _ := newRegion(t, store)
	queueKept(t, r, 1, "a red door", 3, 1, []float32{1, 2})
	queueKept(t, r, 2, "a lighthouse", 4, 1, []float32{1, 2})
	r.Finished(1) // it failed: failed, never unfinished
	if r.Kept(1) || !r.Kept(2) {
		t.Fatalf("kept 1: %v, 2: %v; want only the job still queued", r.Kept(1), r.Kept(2))
	}
	if left, _ := store.List(); len(left) != 1 || left[0].Draft.Prompt != "a lighthouse" {
		t.Fatalf("after job 1 ended, the store keeps %d jobs, want the lighthouse", len(left))
	}
	r.Close(true) // Discard and quit
	if left, _ := store.List(); len(left) != 0 {
		t.Errorf("after Discard and quit, %d jobs are kept", len(left))
	}
	next, _, _ := newRegion(t, store)
	next.OfferResume()
	if next.Offer() != nil {
		t.Error("the next session offers jobs that were discarded")
	}
}

// A kept job's checkpoints go only once its image is on disk: a failed write keeps it (a crash now
// offers it again) until the image is saved in another folder.
func TestKeptJobGoesOnlyWithItsImageOnDisk(t *testing.T) {
	store := openStore(t)
	r, m, f := newRegion(t, store)
	f.folder = unwritable(t)
	f.history = history.New(f.folder)
	queueKept(t, r, 1, "a quiet harbour", 7, 1, []float32{1})
	m.Submitted(1, model.JobRecord{Draft: m.Draft()})
	img := picture(16, 16)
	r.Save(doneJob(1, img))
	f.pump(t, "the failed write's offer", r.Offering)
	if !r.Kept(1) {
		t.Fatal("the job went while its image was not written")
	}
	r.SaveKeptTo(1, t.TempDir())
	f.pump(t, "the image saved elsewhere", func() bool { return !r.Unsaved(1) })
	if r.Kept(1) {
		t.Error("the job is still kept after its image was written")
	}
	if left, _ := store.List(); len(left) != 0 {
		t.Errorf("%d jobs kept after the image was written, want none", len(left))
	}
}
