package ui

import (
	"path/filepath"
	"testing"

	"easel/app/settings"
)

// The main menu offers Settings…; settings saved by the dialog reach the window: the backend
// selector, the output folder that history writes to, and the persisted file.
func TestSettingsMenuAppliesSavedSettings(t *testing.T) {
	var store *settings.Store
	h := newHarnessWith(t, 16e9, func(h *harness, d *Deps) {
		store = &settings.Store{Path: filepath.Join(h.dir, "settings.json")}
		d.Store = store
	})
	var found bool
	for _, m := range h.w.MainMenu().Items {
		for _, it := range m.Items {
			if it.Label == "Settings…" && it.Action != nil {
				found = true
			}
		}
	}
	if !found {
		t.Fatal("the main menu has no Settings… item")
	}
	ns := h.s.deps.Settings
	ns.Backend = settings.BackendCPU
	ns.OutputFolder = filepath.Join(h.dir, "elsewhere")
	if err := store.Save(ns); err != nil {
		t.Fatal(err)
	}
	h.s.settingsSaved(ns)
	if got := h.s.options.Backend.Selected; got != "CPU" {
		t.Errorf("backend selector shows %q after saving CPU", got)
	}
	if h.s.draft().Backend != settings.BackendCPU {
		t.Errorf("the next job's backend is %q", h.s.draft().Backend)
	}
	if h.s.deps.History == nil || h.s.deps.Settings.OutputFolder != ns.OutputFolder {
		t.Errorf("output folder not applied: %+v", h.s.deps.Settings)
	}
	saved, err := store.Load()
	if err != nil || saved.Backend != settings.BackendCPU || saved.OutputFolder != ns.OutputFolder {
		t.Errorf("persisted %+v, %v", saved, err)
	}
}
