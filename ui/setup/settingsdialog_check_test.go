package setup

import (
	"path/filepath"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"easel/app/settings"
)

// "Check each image against its prompt" is off in new settings, saved when turned on, and shown
// as saved when the dialog opens again.
func TestSettingsDialogSavesCheckImages(t *testing.T) {
	test.NewTempApp(t)
	store := &settings.Store{Path: filepath.Join(t.TempDir(), "settings.json")}
	w := test.NewTempWindow(t, widget.NewLabel("main window"))
	w.Resize(fyne.NewSize(900, 700))
	var saved []settings.Settings
	f := showSettings(w, store, func(s settings.Settings) { saved = append(saved, s) }, "", nil)
	if f.check.Checked {
		t.Error("Check images is on in new settings")
	}
	f.check.SetChecked(true)
	test.Tap(findButton(t, w, "Save"))
	s, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(saved) != 1 || !s.CheckImages || !saved[0].CheckImages {
		t.Fatalf("saved %+v, file %+v; want Check images on in both", saved, s)
	}
	if again := showSettings(w, store, nil, "", nil); !again.check.Checked {
		t.Error("the dialog opened again shows Check images off, though it was saved on")
	}
}
