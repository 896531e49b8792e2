package ui

import (
	"strings"
	"testing"

	"easel/ui/setup"
)

// Help → Copy Diagnostics puts the diagnostics report on the clipboard, without the prompt.
func TestCopyDiagnostics(t *testing.T) {
	h := newHarness(t, 16e9)
	var item func()
	for _, m := range h.w.MainMenu().Items {
		for _, it := range m.Items {
			if it.Label == "Copy Diagnostics" {
				item = it.Action
			}
		}
	}
	if item == nil {
		t.Fatal("the main menu has no Copy Diagnostics item")
	}
	text := setup.Diagnostics(h.s.deps.Settings.Backend)
	for _, want := range []string{"diagnostics", "machine:", "backend:", "half guards:"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	item() // the test app's clipboard, or a sentence without one
}
