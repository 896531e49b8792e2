package ui

import (
	"fyne.io/fyne/v2"

	"easel/app/backend"
	"easel/app/history"
	"easel/app/settings"
	"easel/ui/setup"
)

// settingsMenuItem opens the settings dialog (model, backend, output folder, default size and
// steps). On macOS Fyne moves an item called "Settings…" into the application menu.
func (s *window) settingsMenuItem() *fyne.MenuItem {
	item := fyne.NewMenuItem("Settings…", s.showSettings)
	item.Shortcut = settingsShortcut
	return item
}

// showSettings shows the dialog when the window has a settings file to edit.
func (s *window) showSettings() {
	if s.deps.Store == nil {
		s.say("Settings cannot be changed: %v", s.deps.SettingsErr)
		return
	}
	setup.ShowSettingsWithGPU(s.win, s.deps.Store, s.settingsSaved, s.gpuSummary(), s.show)
}

// gpuSummary is the Settings dialog's read-only GPU section: the cached first-use self-test and
// kernel choices for the Metal device the backend setting uses ("" without one). The device
// named is the one the last job ran on when there was one (the emulator, in tests).
func (s *window) gpuSummary() string {
	dir, err := settings.Dir()
	if err != nil {
		return ""
	}
	dev := ""
	if g, ok := s.deps.Generator.(interface{ MetalDevice() string }); ok {
		dev = g.MetalDevice()
	}
	if dev == "" {
		if c, err := backend.Choose(s.deps.Settings.Backend); err == nil && c.Metal() {
			dev = c.Device.Name()
		}
	}
	return backend.FirstUseSummary(dir, dev)
}

// settingsSaved brings the window in line with settings saved by the dialog: a new model or
// backend takes effect at the next Generate, a new output folder for the next saved image.
func (s *window) settingsSaved(ns settings.Settings) {
	old := s.deps.Settings
	s.deps.Settings = ns
	s.applyNetwork(ns)
	if ns.Model != old.Model && ns.Model != "" {
		s.useModel(ns.Model)
	}
	if ns.Backend != old.Backend {
		// The selector's change handler records the choice (setBackend).
		s.options.Backend.SetSelected(map[settings.Backend]string{settings.BackendAuto: "Auto", settings.BackendMetal: "Metal", settings.BackendCPU: "CPU"}[ns.Backend])
	}
	if ns.NoGPUTuning != old.NoGPUTuning {
		if g, ok := s.deps.Generator.(interface{ SetAutoTune(bool) }); ok {
			g.SetAutoTune(!ns.NoGPUTuning)
		}
	}
	if ns.Preview != old.Preview {
		s.draftChanged() // the sharp preview's decodes join the denoiser's stage in the prediction
	}
	if ns.Upscaler != old.Upscaler {
		s.upscales.Runners.Close() // the next upscale loads the new choice
	}
	if ns.OutputFolder != old.OutputFolder {
		s.deps.History = history.New(ns.OutputFolder)
		s.say("New images go to %s.", shortPath(ns.OutputFolder))
	}
}
