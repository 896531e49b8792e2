package ui

import (
	"strings"
	"testing"

	"easel/app/settings"
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
	text := h.s.diagnosticsText()
	for _, want := range []string{"diagnostics", "machine:", "backend:", "half guards:"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	item() // the test app's clipboard, or a sentence without one
}

// With the backend set to the CPU the report says why Metal is not used: never "Metal:
// unavailable — " with nothing after it.
func TestDiagnosticsSayWhyMetalIsUnavailable(t *testing.T) {
	h := newHarnessWith(t, 16e9, func(h *harness, d *Deps) { d.Settings.Backend = settings.BackendCPU })
	text := h.s.diagnosticsText()
	for _, line := range strings.Split(text, "\n") {
		if why, ok := strings.CutPrefix(line, "Metal: unavailable — "); ok {
			if !strings.Contains(why, "as the backend setting asks") {
				t.Errorf("the report says %q; want the reason (the backend setting)", line)
			}
			return
		}
	}
	t.Errorf("the report has no Metal line:\n%s", text)
}
