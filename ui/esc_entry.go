package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// escEntry is a one-line entry on which Escape cancels the running job, as everywhere in the
// window (a plain entry keeps the key for itself).
type escEntry struct {
	widget.Entry
	s      *window
	onBlur func() // after the entry lost the focus (nil: nothing)
}

// FocusLost runs onBlur after the entry's own handling.
func (e *escEntry) FocusLost() {
	e.Entry.FocusLost()
	if e.onBlur != nil {
		e.onBlur()
	}
}

func newEscEntry(s *window) *escEntry {
	e := &escEntry{s: s}
	e.ExtendBaseWidget(e)
	return e
}

// TypedKey handles Escape, then the entry's own keys.
func (e *escEntry) TypedKey(k *fyne.KeyEvent) {
	if k.Name == fyne.KeyEscape {
		e.s.escapeKey()
		return
	}
	e.Entry.TypedKey(k)
}
