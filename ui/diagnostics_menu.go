package ui

import (
	"fyne.io/fyne/v2"

	"easel/ui/setup"
)

// diagnosticsMenuItem copies `easel diagnose`'s report (ui/setup's Diagnostics) to the
// clipboard: Help → Copy Diagnostics.
func (s *window) diagnosticsMenuItem() *fyne.MenuItem {
	return fyne.NewMenuItem("Copy Diagnostics", s.copyDiagnostics)
}

func (s *window) copyDiagnostics() {
	cb := s.clipboard()
	if cb == nil {
		s.say("There is no clipboard to copy the diagnostics to; run `easel diagnose` in a terminal instead.")
		return
	}
	cb.SetContent(setup.Diagnostics(s.deps.Settings.Backend))
	s.say("Diagnostics copied: paste them into an issue (they hold no prompt and no folder names).")
}
