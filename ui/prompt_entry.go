package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// promptEntry is a multi-line entry that also answers the window's keys while it has the focus:
// Escape cancels the running job, and pasting an image (or an image file's path) adds a
// condition image instead of text.
type promptEntry struct {
	widget.Entry
	s *window
}

func newPromptEntry(s *window) *promptEntry {
	e := &promptEntry{s: s}
	e.MultiLine = true
	e.Wrapping = fyne.TextWrapWord
	e.ExtendBaseWidget(e)
	return e
}

// TypedKey handles Escape, then the entry's own keys.
func (e *promptEntry) TypedKey(k *fyne.KeyEvent) {
	if k.Name == fyne.KeyEscape {
		e.s.escapeKey()
		return
	}
	e.Entry.TypedKey(k)
}

// AcceptsTab is false: Tab and Shift+Tab move the focus through the recipe, as in every other
// field (a prompt has no use for a tab character).
func (e *promptEntry) AcceptsTab() bool { return false }

// TypedShortcut takes a paste that holds an image; text pastes as usual.
func (e *promptEntry) TypedShortcut(sc fyne.Shortcut) {
	if p, ok := sc.(*fyne.ShortcutPaste); ok && e.s.pasteAsStart(p.Clipboard, true) {
		return
	}
	e.Entry.TypedShortcut(sc)
}
