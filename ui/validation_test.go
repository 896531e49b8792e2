package ui

import (
	"easel/ui/recipe"
	"strings"
	"testing"

	"fyne.io/fyne/v2/dialog"
)

// A field's problem shows as it is typed and goes once the value is right (it never stays stale);
// a custom side past the model's range says it was clamped, and leaving the field shows the side
// the run uses.
func TestValidationFollowsTheTyping(t *testing.T) {
	h := newHarness(t, 0)
	o := h.s.options
	o.Steps.SetText("1")
	if !strings.HasPrefix(h.s.message.Text, "Steps:") || !h.s.message.Visible() {
		t.Fatalf("steps 1: notice %q", h.s.message.Text)
	}
	o.Steps.SetText("12")
	if h.s.message.Visible() || h.s.draft().Steps != 12 {
		t.Fatalf("steps 12: the notice still says %q (steps %d)", h.s.message.Text, h.s.draft().Steps)
	}

	o.SizeSelect.SetSelected(recipe.SizeCustomLabel)
	o.CustomW.SetText("99999")
	o.CustomH.SetText("512")
	if got := o.SizeResult.Text; !strings.Contains(got, "4096 × 512") || !strings.Contains(got, "clamped") {
		t.Fatalf("width 99999 says %q", got)
	}
	o.CustomW.FocusLost()
	if o.CustomW.Text != "4096" || h.s.draft().CustomW != 4096 {
		t.Errorf("after leaving the field it shows %q (draft %d), want the 4096 the run uses", o.CustomW.Text, h.s.draft().CustomW)
	}
	o.CustomH.SetText("500")
	o.CustomH.FocusLost()
	if o.CustomH.Text != "512" {
		t.Errorf("height 500 shows %q after leaving the field, want the snapped 512", o.CustomH.Text)
	}
}

// ⌘↩ while a dialog is open (the settings, an offer) queues nothing behind it.
func TestGenerateWaitsForAnOpenDialog(t *testing.T) {
	h := newHarness(t, 64e9)
	dialog.ShowInformation("Settings", "open", h.w)
	h.s.generate()
	if n := len(h.s.queue.Jobs()); n != 0 {
		t.Fatalf("⌘↩ behind a dialog queued %d jobs", n)
	}
	h.w.Canvas().Overlays().Remove(h.w.Canvas().Overlays().Top())
	h.s.generate()
	<-h.gen.started
}
