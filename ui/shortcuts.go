package ui

import (
	"runtime"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
)

// The window's keys: ⌘↩ / Ctrl+Enter generates, ⌘. cancels, Escape closes the question on top
// or cancels, ⌘O adds images, ⌘V (when no text field has the focus, or an image in the prompt)
// pastes a picture as the start image, ⌘Z (likewise) undoes, ⌘Q / Ctrl+Q quits (asking while
// jobs run). Generate and Cancel are menu items so they work while typing in the prompt; Tab
// moves the focus (the prompt takes no tab).
var (
	generateShortcut = &desktop.CustomShortcut{KeyName: fyne.KeyReturn, Modifier: fyne.KeyModifierShortcutDefault}
	cancelShortcut   = &desktop.CustomShortcut{KeyName: fyne.KeyPeriod, Modifier: fyne.KeyModifierShortcutDefault}
	addShortcut      = &desktop.CustomShortcut{KeyName: fyne.KeyO, Modifier: fyne.KeyModifierShortcutDefault}
	settingsShortcut = &desktop.CustomShortcut{KeyName: fyne.KeyComma, Modifier: fyne.KeyModifierShortcutDefault}
	quitShortcut     = &desktop.CustomShortcut{KeyName: fyne.KeyQ, Modifier: fyne.KeyModifierShortcutDefault}
)

func (s *window) installShortcuts() {
	gen := fyne.NewMenuItem("Generate", s.generate)
	gen.Shortcut = generateShortcut
	cancel := fyne.NewMenuItem("Cancel", s.cancelCurrent)
	cancel.Shortcut = cancelShortcut
	add := fyne.NewMenuItem("Add Condition Images…", s.work.PickImages)
	add.Shortcut = addShortcut
	paste := fyne.NewMenuItem("Paste Image as Start Image", func() {
		if !s.work.PasteAsStart(s.clipboard(), false) {
			s.say("The clipboard holds no image and no image file path.")
		}
	})
	paste.Shortcut = &fyne.ShortcutPaste{}
	pasteCondition := fyne.NewMenuItem("Paste as Condition Image", func() {
		if !s.work.PasteImage(s.clipboard(), true) {
			s.say("The clipboard holds no image and no image file path.")
		}
	})
	undo := fyne.NewMenuItem("Undo", s.undo)
	undo.Shortcut = &fyne.ShortcutUndo{}
	s.win.SetMainMenu(fyne.NewMainMenu(
		fyne.NewMenu("Easel", s.settingsMenuItem(), s.remote.StudioMenuItem(), fyne.NewMenuItemSeparator(), s.quitItem()),
		fyne.NewMenu("Edit", undo, fyne.NewMenuItemSeparator(), paste, pasteCondition),
		fyne.NewMenu("Image", gen, cancel, fyne.NewMenuItemSeparator(), add, fyne.NewMenuItemSeparator(),
			fyne.NewMenuItem("Restore from Image…", s.work.RestoreFromImage)),
		fyne.NewMenu("Help", s.diagnosticsMenuItem())))

	c := s.win.Canvas()
	c.AddShortcut(generateShortcut, func(fyne.Shortcut) { s.generate() })
	c.AddShortcut(cancelShortcut, func(fyne.Shortcut) { s.cancelCurrent() })
	c.AddShortcut(&fyne.ShortcutPaste{}, func(sc fyne.Shortcut) {
		cb := s.clipboard()
		if p, ok := sc.(*fyne.ShortcutPaste); ok && p.Clipboard != nil {
			cb = p.Clipboard
		}
		if !s.work.PasteAsStart(cb, false) { // a picture pasted on the window is the start image
			s.say("The clipboard holds no image and no image file path.")
		}
	})
	if !isMac {
		// macOS's Quit item answers ⌘Q itself; elsewhere the window does.
		c.AddShortcut(quitShortcut, func(fyne.Shortcut) { s.askClose() })
	}
	c.AddShortcut(&fyne.ShortcutUndo{}, func(fyne.Shortcut) { s.undo() })
	c.SetOnTypedKey(func(k *fyne.KeyEvent) {
		if k.Name == fyne.KeyEscape {
			s.escapeKey()
		}
	})
}

// shortcutHint names the keys as this system writes them.
func shortcutHint() string {
	if runtime.GOOS == "darwin" {
		return "⌘↩ generate · ⌘. or Esc cancel · ⌘V paste an image"
	}
	return "Ctrl+Enter generate · Ctrl+. or Esc cancel · Ctrl+V paste an image"
}
