package recipe

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"easel/engine/lora"
)

// Built alone on a model: the switch stays hidden until a LoRA of the draft has a preset; Draft
// then takes the few-step LoRA and its steps through the model, Final all the steps without it,
// each telling the window the list changed; the hint says both sides in steps. Without a LoRA
// folder the download is refused with what to do instead.
func TestFastDraftsAloneSwitchDraftAndFinal(t *testing.T) {
	test.NewTempApp(t)
	m := newModel()
	m.SetSteps(40)
	changed := 0
	f := NewFastDrafts(m, FastDraftsActions{LoRAsChanged: func() { changed++ }})
	m.AddLoRA("/loras/ink-style.safetensors")
	f.Refresh()
	if f.Mode.Visible() || f.Hint.Visible() {
		t.Fatal("the switch shows without a few-step LoRA")
	}
	m.AddLoRA("/loras/turbo.safetensors")
	f.Presets["/loras/turbo.safetensors"] = &lora.Preset{Name: "Turbo", Steps: 8, CFG: 1, Schedule: "turbo"}
	f.Refresh()
	if !f.Mode.Visible() || f.Mode.Selected != ModeFinal {
		t.Fatalf("with a few-step LoRA: switch shown %v on %q, want Final", f.Mode.Visible(), f.Mode.Selected)
	}
	if want := "Draft: 8 steps with the few-step LoRA turbo.safetensors, for quick looks. Final: all 40 steps, without the LoRA."; f.Hint.Text != want {
		t.Errorf("hint %q, want %q", f.Hint.Text, want)
	}
	f.Mode.SetSelected(ModeDraft)
	d := m.Draft()
	if !d.Mode.On || d.Mode.LoRA != "/loras/turbo.safetensors" || d.Steps != 8 || changed != 1 {
		t.Fatalf("Draft: mode %+v, steps %d, list changes %d", d.Mode, d.Steps, changed)
	}
	f.Mode.SetSelected(ModeFinal)
	if d := m.Draft(); d.Mode.On || d.Steps != 40 || changed != 2 {
		t.Errorf("Final: on %v, steps %d, list changes %d", d.Mode.On, d.Steps, changed)
	}
	f.switched(ModeFinal) // already Final: nothing changes, the window is not told again
	if changed != 2 {
		t.Errorf("choosing Final again told the window %d times in all", changed)
	}

	test.Tap(f.Download)
	if n := m.Notice().Text; f.Panel != nil || !strings.Contains(n, "LoRA folder is unknown") {
		t.Errorf("a download without a LoRA folder: panel %v, notice %q", f.Panel != nil, n)
	}
}
