package ui

import (
	"image"

	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/engine/pipeline"
)

// save writes a finished image to the output folder off the UI goroutine, then lists it. An image
// that cannot be saved there is kept (keep) and another folder offered.
func (s *window) save(j jobs.Job) {
	defer s.finishedKept(j.ID) // after its image's write began: kept until the PNG is on disk
	rec, ok := s.model.Job(j.ID)
	d := rec.Draft
	s.model.Forget(j.ID)
	if j.Result == nil || j.Result.Image == nil || j.Result.Batch != nil {
		return // a batch's images were saved as each finished (batch.go)
	}
	var set *imagefile.Settings
	img := j.Result.Image
	switch pic, api := j.Owner.(apiPicture); {
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
			s.say("Job %d (from %s) could not be saved: %v", j.ID, j.Origin, err)
			return
		}
	default:
		return
	}
	now := s.now()
	store := s.deps.History
	id := j.ID
	edited := j.Request.Init != nil
	s.saveJobImage(id, false, store, img, set, now, func(e history.Entry, err error) {
		if err != nil {
			s.keep(id, keptImage{img: img, set: set, at: now}, err)
			return
		}
		s.history.AddSession(e)
		if edited {
			s.editedPath = e.Path // an inpaint or outpaint: Continue from this (continue_from.go)
		}
		if s.canvasJob == id {
			s.setShownFile(e.Path)
		}
		s.progress.Stage.SetText(s.progress.Stage.Text + " · saved " + shortPath(e.Path))
	})
}

// apiPicture is what a job from app/serve hands the window: its picture and settings.
type apiPicture interface {
	Picture(*pipeline.Result) (*image.NRGBA, *imagefile.Settings, error)
}
