package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"easel/app/jobs"
	"easel/engine/mmapfile"
)

// modelLost reports a job stopped because the model file changed or went away while it was in
// use (a drive unplugged, the file truncated or replaced), and offers to choose the model again:
// with the window's own model chooser, or in the settings dialog (ui/setup). Choosing the same file after reconnecting its drive works
// too: the generator let go of the old mapping and opens the file afresh at the next Generate.
// The queue goes on; the jobs behind this one fail the same way until the file is back.
func (s *window) modelLost(j jobs.Job, fault *mmapfile.FaultError) {
	s.say("Job %d stopped: %v", j.ID, j.Err)
	if s.lostModel != nil {
		return // one offer at a time: the queued jobs behind it fail for the same reason
	}
	text := widget.NewLabel(fmt.Sprintf("Job %d stopped: %v.\n\nChoose the model file again (the same one once its drive is back, or another), here or in Settings.", j.ID, fault))
	text.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustomWithoutButtons("The model file changed or went away", text, s.win)
	answer := func(next func()) func() {
		return func() {
			d.Hide()
			s.lostModel = nil
			if next != nil {
				next()
			}
		}
	}
	choose := widget.NewButton("Choose the model…", answer(s.pickModel))
	choose.Importance = widget.HighImportance
	d.SetButtons([]fyne.CanvasObject{widget.NewButton("Not now", answer(nil)), widget.NewButton("Settings…", answer(s.showSettings)), choose})
	d.Resize(fyne.NewSize(560, 0))
	s.lostModel = d
	s.show(d)
}
