package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/widget"
)

// Closing the window (its close button, ⌘Q / Ctrl+Q, Easel → Quit) never drops work silently:
// with jobs running or queued it asks first (finish later, discard, or keep working); the draft is kept for the next
// launch either way.

// askClose closes the window, first asking when jobs would be lost. With jobs kept across a quit
// (Deps.Unfinished) the first choice is Finish later: the window closes, the jobs stay kept with
// their checkpoints and the next launch offers to resume them. Discard and quit stops them and
// removes what was kept of them; Keep working leaves everything as it is.
func (s *window) askClose() {
	n := s.queue.Pending()
	if n == 0 || s.closeAsked {
		s.win.Close()
		return
	}
	what := fmt.Sprintf("%d jobs are running or queued", n)
	them := "them"
	if n == 1 {
		what, them = "A job is running", "it"
	}
	text := what + ": quitting now stops " + them + " and the images are not made. Your prompt and settings are kept for next time."
	if s.deps.Unfinished != nil {
		text = what + ". Finish later keeps " + them + ": the next launch offers to resume " + them + " from where " +
			map[bool]string{true: "it", false: "they"}[n == 1] + " stopped. Discard and quit stops " + them +
			" for good. Your prompt and settings are kept for next time."
	}
	label := widget.NewLabel(text)
	label.Wrapping = fyne.TextWrapWord
	var d dialog.Dialog
	quit := func(discard bool) {
		d.Hide()
		s.closeAsked, s.discardOnClose = true, discard
		s.win.Close()
	}
	discard := widget.NewButton("Discard and quit", func() { quit(true) })
	discard.Importance = widget.DangerImportance
	keep := widget.NewButton("Keep working", func() { d.Hide() })
	buttons := container.NewHBox(layout.NewSpacer(), discard, keep)
	title := "Quit and discard the jobs?"
	if s.deps.Unfinished != nil {
		later := widget.NewButton("Finish later", func() { quit(false) })
		later.Importance = widget.HighImportance
		buttons = container.NewHBox(layout.NewSpacer(), later, discard, keep)
		title = "Quit with unfinished jobs?"
	}
	d = dialog.NewCustomWithoutButtons(title, container.NewVBox(label, buttons), s.win)
	d.Resize(fyne.NewSize(480, 0))
	s.show(d)
	s.closeDialog = d
}

// quitItem is the menu's Quit (⌘Q), which closes as the close button does.
func (s *window) quitItem() *fyne.MenuItem {
	q := fyne.NewMenuItem("Quit", s.askClose)
	q.IsQuit = true
	q.Shortcut = quitShortcut
	return q
}

// saveDraft keeps the prompt, the everyday settings and the canvas document for the next launch
// (ui/keeping).
func (s *window) saveDraft() { s.drafts.Save(s.maskEdits) }
