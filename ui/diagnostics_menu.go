package ui

import (
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"

	"easel/app/backend"
	"easel/app/diagnose"
	"easel/app/settings"
	"easel/engine/ml/metal"
)

// diagnosticsMenuItem copies `easel diagnose`'s report to the clipboard (Help → Copy
// Diagnostics): the machine, the GPU or why Metal is unavailable, the cached self-test per kernel,
// the guards, the last job's times, declines and retries — nothing personal — for an issue.
func (s *window) diagnosticsMenuItem() *fyne.MenuItem {
	return fyne.NewMenuItem("Copy Diagnostics", s.copyDiagnostics)
}

// diagnosticsText is the report as the window sees it (the self-test as cached; it is not run
// here).
func (s *window) diagnosticsText() string {
	o := diagnose.Options{Guards: metal.DefaultGuards}
	if k, err := metal.KnobsFromEnv(); err == nil {
		o.Guards = k.Guards
	}
	if dir, err := settings.Dir(); err == nil {
		o.Dir = dir
		o.SelfTest = metal.SelfTestCache{Dir: filepath.Join(dir, "selftest")}.Latest()
		o.SelfTestCached = o.SelfTest != nil
	}
	if c, err := backend.Choose(s.deps.Settings.Backend); err != nil {
		o.Backend, o.Why = err.Error(), err.Error()
	} else {
		o.Backend = c.Reason
		if c.Metal() {
			o.Device = c.Device
		} else {
			// "… on the CPU because WHY", or the whole sentence when the setting asked for the CPU.
			if _, why, ok := strings.Cut(c.Reason, " because "); ok && why != "" {
				o.Why = why
			} else {
				o.Why = c.Reason
			}
		}
	}
	return diagnose.Build(o).Text()
}

func (s *window) copyDiagnostics() {
	cb := s.clipboard()
	if cb == nil {
		s.say("There is no clipboard to copy the diagnostics to; run `easel diagnose` in a terminal instead.")
		return
	}
	cb.SetContent(s.diagnosticsText())
	s.say("Diagnostics copied: paste them into an issue (they hold no prompt and no folder names).")
}
