package ui

import (
	"runtime"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
)

// The window's keys: ⌘↩ / Ctrl+Enter generates, ⌘. / Escape cancels, ⌘O adds images, ⌘V (when
// no text field has the focus) pastes an image, ⌘Z (likewise) undoes the last mask step.
// Generate and Cancel are menu items so they work while typing in the prompt.
var (
	generateShortcut = &desktop.CustomShortcut{KeyName: fyne.KeyReturn, Modifier: fyne.KeyModifierShortcutDefault}
	cancelShortcut   = &desktop.CustomShortcut{KeyName: fyne.KeyPeriod, Modifier: fyne.KeyModifierShortcutDefault}
	addShortcut      = &desktop.CustomShortcut{KeyName: fyne.KeyO, Modifier: fyne.KeyModifierShortcutDefault}
	settingsShortcut = &desktop.CustomShortcut{KeyName: fyne.KeyComma, Modifier: fyne.KeyModifierShortcutDefault}
)

func (s *window) installShortcuts() {
	gen := fyne.NewMenuItem("Generate", s.generate)
	gen.Shortcut = generateShortcut
	cancel := fyne.NewMenuItem("Cancel", s.cancelCurrent)
	cancel.Shortcut = cancelShortcut
	add := fyne.NewMenuItem("Add Condition Images…", s.pickImages)
	add.Shortcut = addShortcut
	paste := fyne.NewMenuItem("Paste Image", func() {
		if !s.pasteImage(s.clipboard(), true) {
			s.say("The clipboard holds no image and no image file path.")
		}
	})
	s.win.SetMainMenu(fyne.NewMainMenu(
		fyne.NewMenu("Easel", s.settingsMenuItem(), s.studioMenuItem(), fyne.NewMenuItemSeparator(), s.quitItem()),
		fyne.NewMenu("Image", gen, cancel, fyne.NewMenuItemSeparator(), add, paste, fyne.NewMenuItemSeparator(),
			fyne.NewMenuItem("Restore from Image…", s.restoreFromImage)),
		fyne.NewMenu("Help", s.diagnosticsMenuItem())))

	c := s.win.Canvas()
	c.AddShortcut(generateShortcut, func(fyne.Shortcut) { s.generate() })
	c.AddShortcut(cancelShortcut, func(fyne.Shortcut) { s.cancelCurrent() })
	c.AddShortcut(&fyne.ShortcutPaste{}, func(sc fyne.Shortcut) {
		cb := s.clipboard()
		if p, ok := sc.(*fyne.ShortcutPaste); ok && p.Clipboard != nil {
			cb = p.Clipboard
		}
		if !s.pasteImage(cb, true) {
			s.say("The clipboard holds no image and no image file path.")
		}
	})
	c.AddShortcut(&fyne.ShortcutUndo{}, func(fyne.Shortcut) { s.undo() })
	c.SetOnTypedKey(func(k *fyne.KeyEvent) {
		if k.Name == fyne.KeyEscape {
			s.cancelCurrent()
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
