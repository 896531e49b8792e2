package ui

import (
	"testing"

	"fyne.io/fyne/v2"

	"easel/app/jobs"
)

// menuAction is the action of the main-menu item bound to a shortcut: what the desktop driver
// runs on that key, before any focused widget sees it (the test driver has no key dispatch).
func menuAction(t *testing.T, w fyne.Window, sc fyne.Shortcut) func() {
	t.Helper()
	if m := w.MainMenu(); m != nil {
		for _, menu := range m.Items {
			for _, it := range menu.Items {
				if it.Shortcut != nil && it.Shortcut.ShortcutName() == sc.ShortcutName() {
					return it.Action
				}
			}
		}
	}
	t.Fatalf("no menu item for %s", sc.ShortcutName())
	return nil
}

// ⌘↩ / Ctrl+Enter generates and ⌘. / Ctrl+. cancels, as main-menu shortcuts so they work while
// the prompt has the focus.
func TestShortcutsGenerateAndCancel(t *testing.T) {
	h := newHarness(t, 64e9)
	h.w.Canvas().Focus(h.s.prompt.Text)
	menuAction(t, h.w, generateShortcut)()
	<-h.gen.started
	h.pump("running", func() bool { return h.s.model.Current() == 1 })
	menuAction(t, h.w, cancelShortcut)()
	h.pump("cancelled", func() bool {
		j := h.s.queue.Jobs()
		return len(j) == 1 && j[0].State == jobs.Cancelled
	})
}
