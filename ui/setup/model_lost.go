package setup

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"easel/app/jobs"
)

// ModelLost is the offer to choose the model again after a job stopped because the model file
// changed or went away while it was in use (a drive unplugged, the file truncated or replaced):
// with the window's own model chooser, or in the settings dialog. Choosing the same file after
// reconnecting its drive works too: the generator let go of the old mapping and opens the file
// afresh at the next Generate. One offer at a time: the queued jobs behind the first fail for the
// same reason until the file is back.
type ModelLost struct {
	win            fyne.Window
	show           func(d dialog.Dialog)
	choose, inSets func()
	shown          *dialog.CustomDialog
}

// NewModelLost makes the offer over win: show puts a dialog on the window's question stack,
// choose opens the model chooser, settings the settings dialog.
func NewModelLost(win fyne.Window, show func(d dialog.Dialog), choose, settings func()) *ModelLost {
	return &ModelLost{win: win, show: show, choose: choose, inSets: settings}
}

// Offer shows the offer for job id stopped by fault, unless one is already shown.
func (o *ModelLost) Offer(id jobs.ID, fault error) {
	if o.shown != nil {
		return
	}
	text := widget.NewLabel(fmt.Sprintf("Job %d stopped: %v.\n\nChoose the model file again (the same one once its drive is back, or another), here or in Settings.", id, fault))
	text.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustomWithoutButtons("The model file changed or went away", text, o.win)
	answer := func(next func()) func() {
		return func() {
			d.Hide()
			o.shown = nil
			if next != nil {
				next()
			}
		}
	}
	choose := widget.NewButton("Choose the model…", answer(o.choose))
	choose.Importance = widget.HighImportance
	d.SetButtons([]fyne.CanvasObject{widget.NewButton("Not now", answer(nil)), widget.NewButton("Settings…", answer(o.inSets)), choose})
	d.Resize(fyne.NewSize(560, 0))
	o.shown = d
	o.show(d)
}

// Shown reports whether the offer is on screen, waiting for an answer.
func (o *ModelLost) Shown() bool { return o.shown != nil }
