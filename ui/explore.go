package ui

// The shell's side of the Explore region (ui/explore): what the section and its grid ask of the
// window.

import (
	"fyne.io/fyne/v2"
	"image"
	"time"

	"easel/app/compose"
	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/memplan"
	"easel/engine/pipeline"

	"easel/ui/canvasarea"
	"easel/ui/explore"
	"easel/ui/gallery"
	"easel/ui/model"
)

// newExplore builds the Explore region with the shell's services.
func (s *window) newExplore() *explore.Panel {
	return explore.New(s.model, explore.Shell{
		JobDraft: s.jobDraft,
		Predict: func(count int) (memplan.Prediction, error) {
			plan, err := s.memoryPlan()
			if err != nil {
				return memplan.Prediction{}, err
			}
			plan.Count = count
			return memplan.Predict(s.deps.Geometry, plan, s.deps.Budget), nil
		},
		StepTime: func() time.Duration { return s.lastStepTime },
		Submit:   s.submitGrid,
		Cancel:   func(id jobs.ID) { s.queue.Cancel(id) },
		Save: func(id jobs.ID, img *image.NRGBA, set *imagefile.Settings, done func(history.Entry, error)) {
			s.keeping.SaveListed(id, false, img, set, done)
		},
		Restore:    s.restore,
		Vary:       func(c *gallery.Cell, d compose.Draft, strength float64) { s.batch.Vary(c, d, strength) },
		SecondPass: func(c *gallery.Cell, d compose.Draft, factor float64) { s.batch.SecondPass(c, d, factor) },
		ShowGrid:   func() { s.area.Show(canvasarea.Grid) },
		Queued:     s.updateButtons,
		Canvas:     func() fyne.Canvas { return s.win.Canvas() },
		RandomSeed: randomSeed,
		Now:        s.now,
	})
}

// submitGrid queues one job of a grid (its cells in req) as the queue's row label says, with
// the previews Generate's jobs have, and records it in the model.
func (s *window) submitGrid(d compose.Draft, job compose.Job, req pipeline.Request, label string) (jobs.ID, error) {
	if job.Prepared != nil {
		s.finisher.Expect(req.Init, &job)
	}
	if s.deps.Calibrator != nil {
		req.Preview = s.deps.Calibrator.Render
	} else if s.deps.Projection != nil {
		req.Preview = s.deps.Projection.Image
	}
	id, err := s.queue.Submit(req, label)
	if err != nil {
		if req.Init != nil {
			s.finisher.Forget(req.Init)
		}
		return 0, err
	}
	s.model.Submitted(id, model.JobRecord{Draft: d, Peak: s.prediction.Peak, Where: s.router.Where()})
	return id, nil
}
