package ui

import (
	"slices"

	"fyne.io/fyne/v2/dialog"
)

// Every question and panel the window shows over itself goes through show, so Esc closes the one
// on top as its Cancel (or Close, Not now) does: Fyne's dialogs do not take the key themselves.

// questionStack is the window's dialogs while they are shown, the newest last.
type questionStack struct{ open []dialog.Dialog }

// show shows d and keeps it on the stack until it closes.
func (s *window) show(d dialog.Dialog) {
	s.questions.open = append(s.questions.open, d)
	d.SetOnClosed(func() {
		if i := slices.Index(s.questions.open, d); i >= 0 {
			s.questions.open = slices.Delete(s.questions.open, i, i+1)
		}
	})
	d.Show()
}

// escape closes the question on top and reports whether there was one.
func (s *window) escape() bool {
	n := len(s.questions.open)
	if n == 0 {
		return false
	}
	s.questions.open[n-1].Hide() // answers as its dismiss button does
	return true
}

// escapeKey is Esc anywhere in the window: it closes the question on top, else cancels the
// running job.
func (s *window) escapeKey() {
	if !s.escape() {
		s.cancelCurrent()
	}
}
