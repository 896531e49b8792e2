package ui

// The queue's updates as the window shows them: a job's events on the canvas, its sheet and its
// panels, and its end (saved, failed in plain words, cancelled).

import (
	"errors"
	"fmt"
	"image"

	"easel/app/jobs"
	"easel/app/serve/client"
	"easel/engine/cmf"
	"easel/engine/mmapfile"
	"easel/ui/model"

	"easel/ui/canvasarea"
	"easel/ui/imagework"

	"easel/ui/progress"

	"easel/ui/remote"

	"easel/ui/kit"
)

// frameUpdate is the picture an update puts on the canvas, already over the checkerboard: the
// step's sharp preview (a real decode) when it carries one, else its fast preview, or the final
// image; nil for none. With kept (a run that starts from an image through a mask) the previews
// show the kept area as the original.
func frameUpdate(u jobs.Update, kept *imagework.KeptArea) image.Image {
	switch {
	case u.Event != nil && u.Event.Preview != nil && u.Event.Preview.Sharp != nil:
		if kept != nil {
			return canvasarea.FrameFinal(kept.Over(u.Event.Preview.Sharp.Image))
		}
		return canvasarea.FrameFinal(u.Event.Preview.Sharp.Image)
	case u.Event != nil && u.Event.Preview != nil && u.Event.Preview.Image != nil:
		if kept != nil {
			return kit.OverChecker(kept.Over(kit.UpscaleNearest(u.Event.Preview.Image, 4)), 8)
		}
		return canvasarea.FramePreview(u.Event.Preview.Image)
	case u.Event == nil && u.Job.State == jobs.Done && u.Job.Result != nil && u.Job.Result.Image != nil:
		return canvasarea.FrameFinal(u.Job.Result.Image)
	}
	return nil
}

// onUpdate renders one queue update (UI goroutine); framed is frameUpdate's picture.
func (s *window) onUpdate(u jobs.Update, framed image.Image) {
	j := u.Job
	if u.Status != nil {
		s.showStatus(j, *u.Status)
		return
	}
	if u.Event != nil && u.Event.StepTime > 0 {
		s.lastStepTime = u.Event.StepTime
	}
	if u.Event != nil && !s.explore.Event(j, *u.Event) && u.Event.Images > 1 {
		s.batch.Event(j, *u.Event, framed)
	}
	if u.Event != nil {
		s.progress.ShowEvent(j, *u.Event)
		s.timing.ShowRun(u.Event.Timings, u.Event.GPUClasses, progress.DenoiserTitle(*u.Event) == progress.GPUTitle)
		s.timing.Observe(*u.Event)
		s.memory.ShowLedger(u.Event.Memory, j, s.jobRecord(j.ID).Peak)
		if u.Event.Notice != "" {
			// Where the denoiser runs changed from what was asked (Metal declined: the CPU took over).
			s.sayAbout(j.ID, noticeWarning, "Job %d: %s", j.ID, u.Event.Notice)
		}
		if !ownJob(j) {
			return // an API job (Share this Mac) never takes over the artist's canvas
		}
		if sharp := u.Event.Preview; sharp != nil && sharp.Sharp != nil && framed != nil {
			s.canvas.ShowPreview(framed, j.Request.Width, j.Request.Height,
				fmt.Sprintf("Sharp preview: step %d through the real decoder at 1/%d size", sharp.Sharp.Step, sharp.Sharp.Downsample))
			s.canvasJob, s.sharpJob = j.ID, j.ID
			s.setShownFile("")
		} else if framed != nil && s.sharpJob != j.ID {
			s.canvas.ShowPreview(framed, j.Request.Width, j.Request.Height, s.previewNote())
			s.canvasJob = j.ID
			s.setShownFile("")
		}
		return
	}
	switch j.State {
	case jobs.Running:
		s.model.Started(j.ID)
		s.progress.Start(j)
		s.timing.StartRun()
		if ownJob(j) {
			s.seedUsed(j.Request.Seed)
			if j.Request.Batch() <= 1 && len(j.Request.Cells) == 0 {
				s.area.Show(canvasarea.Canvas) // one image: it is made on the canvas
			}
		}
	case jobs.Done:
		s.finished(j)
		s.progress.Done(j)
		s.timing.ShowResult(j.Result)
		s.showVariants(j.Result)
		if framed != nil && ownJob(j) {
			s.canvas.ShowFinal(framed, j.Result.Width, j.Result.Height)
			s.canvasJob = j.ID
			s.setShownFile("")
		}
		s.keeping.Save(j) // ui/keeping
	case jobs.Failed:
		rec, hadDraft := s.model.Job(j.ID)
		s.explore.Stopped(j) // a grid keeps its finished cells and its partial grid
		s.batch.Stopped(j)
		s.finished(j)
		s.progress.Failed(j)
		if fault := (*mmapfile.FaultError)(nil); errors.As(j.Err, &fault) && fault.Kind == cmf.KindModelFile {
			s.modelLost(j, fault) // kept: it resumes from its checkpoint once the model is back
		} else {
			// A failed job is failed, not unfinished: the next launch does not offer it again
			// (one that rendered on another machine is offered here now, as a new job).
			s.keeping.Finished(j.ID)
			if errors.Is(j.Err, client.ErrServerGone) && hadDraft {
				s.remote.OfferRenderHere(j, rec.Draft)
			} else {
				s.sayKind(noticeError, "Job %d failed: %s", j.ID, remote.PlainJobError(j.Err, rec.Where))
			}
		}
	case jobs.Cancelled:
		s.explore.Stopped(j) // a grid keeps its finished cells and its partial grid
		s.batch.Stopped(j)
		s.finished(j)
		if s.model.Current() == 0 {
			s.progress.Cancelled(j)
		}
	}
	s.queueList.Show(s.queue.Jobs())
	s.updateButtons()
}

// ownJob reports whether the window's artist queued j (an API job of Share this Mac has an
// origin: its pictures go to the history, never onto the canvas).
func ownJob(j jobs.Job) bool { return j.Origin == "" }

// jobRecord is what the window remembers of job id (the zero record for one it did not submit).
func (s *window) jobRecord(id jobs.ID) model.JobRecord {
	r, _ := s.model.Job(id)
	return r
}

// previewNote is the caption over step previews: the calibrator's word while it works (or why
// it failed), else what the picture is.
func (s *window) previewNote() string {
	if s.deps.Calibrator != nil {
		if n := s.deps.Calibrator.Note(); n != "" {
			return n
		}
	}
	return "Preview: the model's current guess, projected from the latents"
}

// finished clears the running job when j was it, and forgets the draft of a job that made no
// image (a done job's draft goes with its image to save), so a long session of cancelled or
// failed jobs does not keep their condition images.
func (s *window) finished(j jobs.Job) {
	s.help.Finished(j)
	s.batch.Ended(j)
	if j.State != jobs.Done {
		s.model.Forget(j.ID)
		if j.Request.Init != nil {
			s.finisher.Forget(j.Request.Init) // a job cancelled before it ran never took it
		}
	}
	running := s.model.Current() == j.ID
	s.model.Ended(j.ID) // its notices end with it (notices.go)
	if running {
		if s.predictedErr == nil {
			plan, _ := s.memoryPlan()
			s.memory.ShowPrediction(s.prediction, plan, s.deps.Geometry)
		}
	}
}
