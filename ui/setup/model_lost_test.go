package setup

import (
	"errors"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// The offer built alone: it says which job stopped and why, shows one at a time, and each answer
// closes it and does what it says.
func TestModelLostOffer(t *testing.T) {
	test.NewTempApp(t)
	w := test.NewTempWindow(t, widget.NewLabel("main window"))
	w.Resize(fyne.NewSize(900, 700))
	shown, chose, settings := 0, 0, 0
	o := NewModelLost(w, func(d dialog.Dialog) { shown++; d.Show() }, func() { chose++ }, func() { settings++ })
	if o.Shown() {
		t.Fatal("an offer is shown before any job stopped")
	}
	o.Offer(3, errors.New("/models/qi.cmf is no longer there"))
	o.Offer(4, errors.New("/models/qi.cmf is no longer there")) // the job behind it: no second offer
	if !o.Shown() || shown != 1 {
		t.Fatalf("after two failures: shown %v, dialogs %d", o.Shown(), shown)
	}
	markup := test.RenderObjectToMarkup(w.Canvas().Overlays().Top())
	for _, want := range []string{"The model file changed or went away", "Job 3 stopped", "/models/qi.cmf is no longer there", "Not now"} {
		if !strings.Contains(markup, want) {
			t.Errorf("the offer lacks %q", want)
		}
	}
	test.Tap(findButton(t, w, "Choose the model…"))
	if o.Shown() || chose != 1 || settings != 0 {
		t.Errorf("after Choose the model…: shown %v, chooser %d, settings %d", o.Shown(), chose, settings)
	}
	o.Offer(5, errors.New("gone"))
	test.Tap(findButton(t, w, "Settings…"))
	if o.Shown() || chose != 1 || settings != 1 || shown != 2 {
		t.Errorf("after Settings…: shown %v, chooser %d, settings %d, dialogs %d", o.Shown(), chose, settings, shown)
	}
}
