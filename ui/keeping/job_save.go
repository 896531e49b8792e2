package keeping

import (
	"image"

	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/ui/kit"
)

// Save writes a window job's finished image to the output folder off the UI goroutine, then lists
// it. An image that cannot be saved there is kept and another folder offered. The job's record
// (ui/model) goes, and its kept job once the PNG is on disk.
func (r *Region) Save(j jobs.Job) {
	defer r.Finished(j.ID) // after its image's write began: kept until the PNG is on disk
	rec, ok := r.model.Job(j.ID)
	d := rec.Draft
	r.model.Forget(j.ID)
	if j.Result == nil || j.Result.Image == nil || j.Result.Batch != nil {
		return // a batch's images were saved as each finished (SaveListed)
	}
	var set *imagefile.Settings
	img := j.Result.Image
	switch pic, api := j.Owner.(kit.APIPicture); {
	case ok:
		set = d.FileSettings(j.Result)
		if hs := rec.Hires; hs != nil {
			// An upscale records A1111's Hires fields: the pass's steps and what ran of them.
			h := *hs
			h.StepsRun = j.Result.StepsRun
			set.Hires = &h
		}
	case api:
		// A job from this window's server (Share this Mac): saved as its answer carries it, with
		// its origin, so it is in the history too.
		var err error
		if img, set, err = pic.Picture(j.Result); err != nil {
			r.say("Job %d (from %s) could not be saved: %v", j.ID, j.Origin, err)
			return
		}
	default:
		return
	}
	now := r.shell.Now()
	id := j.ID
	fromStart := j.Request.Init != nil
	r.SaveJobImage(id, false, r.shell.History(), img, set, now, func(e history.Entry, err error) {
		if err != nil {
			r.keep(id, keptImage{img: img, set: set, at: now}, err)
			return
		}
		r.shell.Listed(e)
		r.shell.JobSaved(e, fromStart)
		r.shell.Saved(id, e.Path)
	})
}

// SaveListed saves a region's picture into the history off the UI goroutine and lists it, then
// hands the entry (or the error) to done. A picture of job id (0: none) that could not be saved
// is kept, and another folder offered; of a job whose kept record waits for its images (perJob),
// the record stays until the PNG is on disk.
func (r *Region) SaveListed(id jobs.ID, perJob bool, img *image.NRGBA, set *imagefile.Settings, done func(history.Entry, error)) {
	now, store := r.shell.Now(), r.shell.History()
	listed := func(e history.Entry, err error) {
		if err != nil && id != 0 {
			r.keep(id, keptImage{img: img, set: set, at: now}, err)
		} else if err == nil {
			r.shell.Listed(e)
		}
		done(e, err)
	}
	if perJob {
		r.SaveJobImage(id, false, store, img, set, now, listed)
	} else {
		r.SaveInBackground(store, img, set, now, listed)
	}
}
