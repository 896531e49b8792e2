package recipe

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"easel/app/compose"
	"easel/app/settings"
)

// TestOptionsFollowTheDraft: the options built alone set the draft as they are edited (size,
// steps, CFG, seed, backend), show it as other regions change it, and never overwrite a field
// while it is typed in; a wrong value is said in the notice until it is right again.
func TestOptionsFollowTheDraft(t *testing.T) {
	test.NewTempApp(t)
	m := newModel()
	var backend settings.Backend
	copied := ""
	p := NewOptions(m, Keys{}, OptionsActions{SetBackend: func(b settings.Backend) { backend = b; m.SetBackend(b) },
		Copy: func(s string) bool { copied = s; return true }, MaxCount: 16})
	if d := m.Draft(); d.Size != compose.SizePreset || p.SizeSelect.Selected != d.Aspect.Name || p.Steps.Text != "30" || p.SeedMode.Selected != "Random" {
		t.Fatalf("built over the draft: size %q, steps %q, seed %q", p.SizeSelect.Selected, p.Steps.Text, p.SeedMode.Selected)
	}

	p.SizeSelect.SetSelected(SizeCustomLabel)
	if !p.customRow.Visible() || p.SizeSelect.Selected != SizeCustomLabel {
		t.Fatal("Custom did not show the sides to edit")
	}
	p.CustomW.SetText("832")
	p.CustomH.SetText("512")
	if d := m.Draft(); d.Size != compose.SizeCustom || d.CustomW != 832 || d.CustomH != 512 || p.SizeResult.Text != "832 × 512 px" {
		t.Errorf("custom 832×512: draft %v %d×%d, says %q", d.Size, d.CustomW, d.CustomH, p.SizeResult.Text)
	}

	p.Steps.SetText("1")
	if n := m.Notice(); !strings.HasPrefix(n.Text, "Steps:") || m.Draft().Steps != 30 {
		t.Errorf("steps 1: notice %q, draft steps %d (want the last right 30)", n.Text, m.Draft().Steps)
	}
	m.SetPrompt("an owl") // another region's change while the field is wrong: the field keeps what is typed
	if p.Steps.Text != "1" {
		t.Errorf("a prompt change overwrote the steps being typed: %q", p.Steps.Text)
	}
	p.Steps.SetText("12")
	if m.Notice().Text != "" || m.Draft().Steps != 12 {
		t.Errorf("steps 12: notice %q, draft steps %d", m.Notice().Text, m.Draft().Steps)
	}

	m.SetSteps(8) // changes made elsewhere: a restore, a preset, an undo
	m.SetCFG(1)
	m.SetPresetSize(compose.Aspects[1])
	if p.Steps.Text != "8" || p.CFG.Value != 1 || p.cfgLabel.Text != "1 (off)" || p.SizeSelect.Selected != compose.Aspects[1].Name || p.ScaleRadio.Disabled() {
		t.Errorf("the draft changed elsewhere: steps %q, CFG %v %q, size %q", p.Steps.Text, p.CFG.Value, p.cfgLabel.Text, p.SizeSelect.Selected)
	}

	p.ShowLastSeed(4242)
	p.SeedMode.SetSelected("Fixed")
	if d := m.Draft(); d.RandomSeed || d.Seed != 4242 || p.SeedEntry.Text != "4242" || p.SeedEntry.Disabled() {
		t.Errorf("Fixed after a run: draft seed %d random %v, entry %q", d.Seed, d.RandomSeed, p.SeedEntry.Text)
	}
	test.Tap(p.copySeed)
	if copied != "4242" || !strings.Contains(m.Notice().Text, "4242 copied") {
		t.Errorf("Copy put %q on the clipboard, said %q", copied, m.Notice().Text)
	}
	p.Backend.SetSelected("CPU")
	if backend != settings.BackendCPU || m.Draft().Backend != settings.BackendCPU {
		t.Errorf("backend CPU: the shell got %q", backend)
	}
	p.Count.SetText("17")
	if !strings.HasPrefix(m.Notice().Text, "Images: give a whole number from 1 to 16") {
		t.Errorf("17 images: notice %q", m.Notice().Text)
	}
}

// TestOptionsSnapOnLeaving: a square size is a custom size whose sides show under Custom, and
// leaving a custom side shows the side the run uses (clamped, snapped).
func TestOptionsSnapOnLeaving(t *testing.T) {
	test.NewTempApp(t)
	m := newModel()
	p := NewOptions(m, Keys{}, OptionsActions{MaxCount: 16})
	p.SizeSelect.SetSelected("512×512")
	if d := m.Draft(); d.Size != compose.SizeCustom || d.CustomW != 512 || p.CustomH.Text != "512" || p.customRow.Visible() {
		t.Fatalf("512×512: draft %v %d×%d, fields %q×%q", d.Size, d.CustomW, d.CustomH, p.CustomW.Text, p.CustomH.Text)
	}
	p.SizeSelect.SetSelected(SizeCustomLabel) // over a square size: the sides to edit show, Custom stays chosen
	if p.SizeSelect.Selected != SizeCustomLabel || !p.customRow.Visible() {
		t.Fatalf("Custom over 512×512: the menu says %q", p.SizeSelect.Selected)
	}
	p.CustomW.SetText("99999")
	p.CustomH.SetText("500")
	if !strings.Contains(p.SizeResult.Text, "clamped") {
		t.Errorf("99999 wide says %q", p.SizeResult.Text)
	}
	p.CustomW.FocusLost()
	p.CustomH.FocusLost()
	if d := m.Draft(); p.CustomW.Text != "4096" || p.CustomH.Text != "512" || d.CustomW != 4096 || d.CustomH != 512 {
		t.Errorf("after leaving: fields %q×%q, draft %d×%d", p.CustomW.Text, p.CustomH.Text, d.CustomW, d.CustomH)
	}
}
