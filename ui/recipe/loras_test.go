package recipe

import (
	"testing"

	"fyne.io/fyne/v2/test"

	"easel/engine/lora"
)

// TestLoRAsFollowTheDraft: the section built alone shows a row per LoRA of the draft; its
// controls ask the shell to enable, set the strength and remove; a change of strength or toggle
// made elsewhere is set in the row in place (a slider being dragged is never replaced), a new file
// rebuilds the rows and brings the section into view; an enabled LoRA with a preset offers it.
func TestLoRAsFollowTheDraft(t *testing.T) {
	test.NewTempApp(t)
	m := newModel()
	shown, refreshed := 0, 0
	preset := &lora.Preset{Name: "Turbo", Steps: 8, CFG: 1}
	var used *lora.Preset
	calls := make(chan func(), 4) // what the preset reads hand back to the UI goroutine
	p := NewLoRAs(m, nil, LoRAsActions{
		Enable:   m.EnableLoRA,
		Strength: m.SetLoRAStrength,
		Remove:   m.RemoveLoRA,
		UsePreset: func(pr *lora.Preset) {
			used = pr
			m.UsePreset(pr)
		},
		Shown:     func() { shown++ },
		Refreshed: func() { refreshed++ },
		ReadPreset: func(path string) *lora.Preset {
			if path == "/loras/turbo.safetensors" {
				return preset
			}
			return nil
		},
		Do: func(f func()) { calls <- f },
	})
	if p.Count.Text != "0 of 0 on" || len(p.Rows) != 0 || p.Offer.Visible() {
		t.Fatalf("no LoRAs: %q, %d rows", p.Count.Text, len(p.Rows))
	}
	m.AddLoRA("/loras/ink-style.safetensors")
	(<-calls)() // its preset read: none
	if len(p.Rows) != 1 || shown != 1 || p.Count.Text != "1 of 1 on" {
		t.Fatalf("one LoRA: %d rows, shown %d, %q", len(p.Rows), shown, p.Count.Text)
	}
	if got := labels(p.List.Objects[0]); len(got) != 2 || got[0] != "ink-style" || got[1] != "1.00" {
		t.Errorf("the row says %q", got)
	}
	row := p.Rows[0]
	row.Strength.SetValue(0.5)
	if m.Draft().LoRAs[0].Strength != 0.5 || row.Value.Text != "0.50" || p.Rows[0] != row {
		t.Errorf("the slider set %v (label %q); the row was rebuilt: %v", m.Draft().LoRAs[0].Strength, row.Value.Text, p.Rows[0] != row)
	}
	m.EnableLoRA(0, false) // elsewhere: an undo, a restore of the same file
	if row.Enabled.Checked || p.Rows[0] != row || p.Count.Text != "0 of 1 on" {
		t.Errorf("disabled elsewhere: checked %v, rebuilt %v, %q", row.Enabled.Checked, p.Rows[0] != row, p.Count.Text)
	}
	row.Enabled.SetChecked(true)
	if !m.Draft().LoRAs[0].Enabled {
		t.Error("the toggle did not enable the LoRA")
	}

	m.AddLoRA("/loras/turbo.safetensors")
	(<-calls)() // its preset read: Turbo
	if len(p.Rows) != 2 || shown != 2 {
		t.Fatalf("two LoRAs: %d rows, shown %d", len(p.Rows), shown)
	}
	if !p.Offer.Visible() || p.Offer.Text != "Use this LoRA's settings: "+preset.Describe() {
		t.Fatalf("the preset offer: visible %v, %q", p.Offer.Visible(), p.Offer.Text)
	}
	test.Tap(p.Offer)
	if used != preset || p.Offer.Text != "Using "+preset.Describe() {
		t.Errorf("the offer used %v and says %q", used, p.Offer.Text)
	}
	test.Tap(p.Rows[0].Remove)
	if len(p.Rows) != 1 || m.Draft().LoRAs[0].Path != "/loras/turbo.safetensors" || refreshed == 0 {
		t.Errorf("after removing the first: %d rows, %v", len(p.Rows), m.Draft().LoRAs)
	}
}
