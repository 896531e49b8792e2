package recipe

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// Keys are the window's keys a field answers while it has the focus: Escape (cancel the running
// job, close the question on top) and a paste that holds an image (true: it was taken as one;
// false: paste the text as usual). Either may be nil.
type Keys struct {
	Escape     func()
	PasteImage func(fyne.Clipboard) bool
}

// Entry is a one-line entry on which Escape does what it does everywhere in the window (a plain
// entry keeps the key for itself).
type Entry struct {
	widget.Entry
	keys Keys
	// OnBlur runs after the entry lost the focus (nil: nothing).
	OnBlur func()
}

// NewEntry is an empty one-line entry answering keys.
func NewEntry(keys Keys) *Entry {
	e := &Entry{keys: keys}
	e.ExtendBaseWidget(e)
	return e
}

// FocusLost runs OnBlur after the entry's own handling.
func (e *Entry) FocusLost() {
	e.Entry.FocusLost()
	if e.OnBlur != nil {
		e.OnBlur()
	}
}

// TypedKey handles Escape, then the entry's own keys.
func (e *Entry) TypedKey(k *fyne.KeyEvent) {
	if k.Name == fyne.KeyEscape && e.keys.Escape != nil {
		e.keys.Escape()
		return
	}
	e.Entry.TypedKey(k)
}

// PromptEntry is a multi-line, word-wrapped entry that answers the window's keys (Keys) while
// it has the focus, and leaves Tab to move the focus.
type PromptEntry struct {
	widget.Entry
	keys Keys
}

// NewPromptEntry is an empty prompt entry answering keys.
func NewPromptEntry(keys Keys) *PromptEntry {
	e := &PromptEntry{keys: keys}
	e.MultiLine = true
	e.Wrapping = fyne.TextWrapWord
	e.ExtendBaseWidget(e)
	return e
}

// TypedKey handles Escape, then the entry's own keys.
func (e *PromptEntry) TypedKey(k *fyne.KeyEvent) {
	if k.Name == fyne.KeyEscape && e.keys.Escape != nil {
		e.keys.Escape()
		return
	}
	e.Entry.TypedKey(k)
}

// AcceptsTab is false: Tab and Shift+Tab move the focus through the recipe, as in every other
// field (a prompt has no use for a tab character).
func (e *PromptEntry) AcceptsTab() bool { return false }

// TypedShortcut takes a paste that holds an image; text pastes as usual.
func (e *PromptEntry) TypedShortcut(sc fyne.Shortcut) {
	if p, ok := sc.(*fyne.ShortcutPaste); ok && e.keys.PasteImage != nil && e.keys.PasteImage(p.Clipboard) {
		return
	}
	e.Entry.TypedShortcut(sc)
}
