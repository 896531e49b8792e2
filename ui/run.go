// Package ui holds Easel's Fyne windows and widgets. It reads state from app/ and sends it
// commands; nothing here does inference.
package ui

import (
	"easel/app/unfinished"
	"os"
	"path/filepath"

	fyneapp "fyne.io/fyne/v2/app"

	"easel/app"
	"easel/app/backend"
	"easel/app/history"
	"easel/app/jobs"
	"easel/app/memplan"
	"easel/app/preview"
	"easel/app/settings"
	"easel/ui/imagework"
	"easel/ui/setup"
)

// Run opens the main window (after the first-run window when no usable model is set up) and
// blocks until the app quits.
func Run() {
	a := fyneapp.NewWithID(app.ID)
	var deps Deps
	setup.Start(a, func() {
		deps = DefaultDeps()
		w, s := newMainWindow(a, deps)
		w.Show()
		w.Canvas().Focus(s.prompt.Text) // again once shown: the desktop driver drops a focus set before
	})
	quitWhenShown(a)
	a.Run()
	if g, ok := deps.Generator.(*jobs.ModelGenerator); ok {
		g.Close()
	}
	if deps.Calibrator != nil {
		deps.Calibrator.Stop()
	}
}

// DefaultDeps are the real services: the persisted settings, the model file's generator, its
// geometry (or the published one) and the device budget, the output folder's history and the
// preview calibrator, started in the background on the model.
func DefaultDeps() Deps {
	d := Deps{Settings: settings.Defaults(), ScanHistory: true, ClipboardFile: imagework.SystemClipboardFile, ClipboardImage: imagework.SystemClipboardImage}
	if st, err := settings.DefaultStore(); err != nil {
		d.SettingsErr = err
	} else {
		d.Store = st
		d.Settings, d.SettingsErr = st.Load()
	}
	if sec, err := settings.DefaultSecrets(); err == nil {
		d.Secrets = sec
	}
	if st, err := settings.DefaultDraftStore(); err == nil {
		d.DraftStore = st
	}
	if st, err := settings.DefaultLoRAStore(); err == nil {
		d.LoRAStore = st
		if d.LoRAs, err = st.Load(); err != nil && d.SettingsErr == nil {
			d.SettingsErr = err
		}
	}
	if dir, err := settings.LoRADir(); err == nil {
		d.LoRADir = dir
		os.MkdirAll(dir, 0o755)
	}
	d.Generator = &jobs.ModelGenerator{Path: d.Settings.Model, Backend: d.Settings.Backend, SelfTestDir: selfTestDir(), TuneDir: backend.TuningDir(),
		DiagnosticsDir: diagnosticsDir(), NoAutoTune: d.Settings.NoGPUTuning}
	d.Geometry = memplan.PublishedGeometry()
	if d.Settings.Model != "" {
		if g, err := memplan.GeometryOf(d.Settings.Model); err == nil {
			d.Geometry = g
		}
	}
	d.Budget = memplan.DeviceBudget(d.Settings.Backend)
	d.BudgetFor = memplan.DeviceBudget
	d.History = history.New(d.Settings.OutputFolder)
	cache, err := preview.DefaultCache()
	if err != nil {
		cache = preview.Cache{} // calibrations are then not kept between launches
	}
	d.Calibrator = &preview.Calibrator{Cache: cache}
	d.Calibrator.Start(d.Settings.Model)
	if dir, err := settings.Dir(); err == nil {
		// Jobs kept across a crash or a quit; a folder that cannot be written turns that off, said once.
		if d.Unfinished, err = unfinished.Open(dir); err != nil && d.SettingsErr == nil {
			d.SettingsErr = err
		}
	}
	return d
}

// selfTestDir is the app-support folder's selftest/, where the first-use Metal self-test's report
// is cached ("" when there is no app-support folder: the self-test is then skipped).
// diagnosticsDir is the app-support folder the last job's record goes to (Help → Copy
// Diagnostics and `easel diagnose` read it), or "" when there is none.
func diagnosticsDir() string {
	dir, err := settings.Dir()
	if err != nil {
		return ""
	}
	return dir
}

func selfTestDir() string {
	dir, err := settings.Dir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "selftest")
}
