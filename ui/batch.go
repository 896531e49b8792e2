package ui

// The shell's side of the batch region (ui/batch): what the contact sheet asks of the window.

import (
	"image"
	"time"

	"fyne.io/fyne/v2/dialog"

	"easel/app/compose"
	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/memplan"

	"easel/ui/batch"
	"easel/ui/canvasarea"
)

// MaxWindowCount is the largest batch the window makes (the CLI goes to pipeline.MaxCount).
const MaxWindowCount = batch.MaxCount

// newBatch builds the batch region with the shell's services.
func (s *window) newBatch() *batch.Region {
	return batch.New(s.model, batch.Shell{
		Store: func() *history.Store { return s.deps.History },
		Save: func(id jobs.ID, img *image.NRGBA, set *imagefile.Settings, done func(history.Entry, error)) {
			s.keeping.SaveListed(id, true, img, set, done)
		},
		Listed: func(e history.Entry) { s.history.AddSession(e) },
		Open:   s.openPicture,
		Removed: func(path string) {
			if s.actions.Shown() == path {
				s.setShownFile("")
			}
		},
		ShowSheet: func() { s.area.Show(canvasarea.Batch) },
		Menu:      s.cellMenu,
		Submit: func(d compose.Draft, kind string, hs *imagefile.HiresSettings) bool {
			s.nextKind, s.nextHires = kind, hs
			return s.submit(d, d.Seed)
		},
		Ask:             s.askOffer,
		FirstStageOffer: s.upscales.FirstStageOffer,
		FirstStage:      s.upscales.FirstStage,
		Memory:          func() (memplan.Geometry, int64) { return s.deps.Geometry, s.deps.Budget },
		StepTime:        func() time.Duration { return s.lastStepTime },
		RandomSeed:      randomSeed,
		Now:             s.now,
	})
}

// openPicture shows a finished picture (saved at path, "" when not yet) on the canvas.
func (s *window) openPicture(img image.Image, path string) {
	b := img.Bounds()
	s.canvas.ShowFinal(canvasarea.FrameFinal(img), b.Dx(), b.Dy())
	s.canvasJob = 0
	s.setShownFile(path)
}

// askOffer asks whether to run what (an Upscale or Refine offer saying text); yes runs on the
// confirm button. Without a window (a test's shell) it runs at once.
func (s *window) askOffer(what, text, confirm string, yes func()) {
	if s.win == nil {
		yes()
		return
	}
	dlg := dialog.NewConfirm(what+"?", text, func(ok bool) {
		if ok {
			yes()
		}
	}, s.win)
	dlg.SetConfirmText(confirm)
	dlg.SetDismissText("Not now")
	s.show(dlg)
	s.offer, s.offerText = dlg, text
}
