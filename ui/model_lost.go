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
// use (a drive unplugged, the file truncated or replaced), and offers to choose the model again
// with the window's own model chooser. Choosing the same file after reconnecting its drive works
// too: the generator let go of the old mapping and opens the file afresh at the next Generate.
// The queue goes on; the jobs behind this one fail the same way until the file is back.
func (s *studio) modelLost(j jobs.Job, fault *mmapfile.FaultError) {
	s.say("Job %d stopped: %v", j.ID, j.Err)
	if s.lostModel != nil {
		return // one offer at a time: the queued jobs behind it fail for the same reason
	}
	text := widget.NewLabel(fmt.Sprintf("Job %d stopped: %v.\n\nChoose the model file again (the same one once its drive is back, or another).", j.ID, fault))
	text.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustomConfirm("The model file changed or went away", "Choose the model…", "Not now", text, func(choose bool) {
		s.lostModel = nil
		if choose {
			s.pickModel()
		}
	}, s.win)
	d.Resize(fyne.NewSize(560, 0))
	s.lostModel = d
	d.Show()
}
