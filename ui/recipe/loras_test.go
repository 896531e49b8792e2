package recipe

import (
	"errors"
	"fmt"
	"testing"

	"fyne.io/fyne/v2/test"

	"easel/app/settings"
	"easel/engine/lora"
)

// TestLoRAsFollowTheDraft: the section built alone shows a row per LoRA of the draft; its
// controls enable, set the strength and remove, each change kept through Save; a change of strength or toggle
// made elsewhere is set in the row in place (a slider being dragged is never replaced), a new file
// rebuilds the rows and brings the section into view; an enabled LoRA with a preset offers it.
func TestLoRAsFollowTheDraft(t *testing.T) {
	test.NewTempApp(t)
	m := newModel()
	shown, refreshed := 0, 0
	preset := &lora.Preset{Name: "Turbo", Steps: 8, CFG: 1}
	var said []string
	var saved [][]settings.LoRA
	calls := make(chan func(), 4) // what the preset reads hand back to the UI goroutine
	p := NewLoRAs(m, nil, LoRAsActions{
		Save:      func(ls []settings.LoRA) error { saved = append(saved, ls); return nil },
		Say:       func(format string, args ...any) { said = append(said, fmt.Sprintf(format, args...)) },
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
	if m.Draft().Preset != preset || p.Offer.Text != "Using "+preset.Describe() || len(said) != 1 || said[0] != "Using "+preset.Describe()+"." {
		t.Errorf("the offer used %v, says %q; the window said %q", m.Draft().Preset, p.Offer.Text, said)
	}
	kept := len(saved)

	test.Tap(p.Rows[0].Remove)
	if len(p.Rows) != 1 || m.Draft().LoRAs[0].Path != "/loras/turbo.safetensors" || refreshed == 0 {
		t.Errorf("after removing the first: %d rows, %v", len(p.Rows), m.Draft().LoRAs)
	}
	if len(saved) != kept+1 || len(saved[kept]) != 1 || saved[kept][0].Path != "/loras/turbo.safetensors" {
		t.Errorf("after removing, the list kept is %v", saved[kept:])
	}
}

// Adding files says which were added and which the list had; a failed save is said, and the
// list stays in the draft.
func TestLoRAsAddAndKeep(t *testing.T) {
	test.NewTempApp(t)
	m := newModel()
	var said []string
	fail := errors.New("disk full")
	p := NewLoRAs(m, nil, LoRAsActions{
		Save: func([]settings.LoRA) error { return fail },
		Say:  func(format string, args ...any) { said = append(said, fmt.Sprintf(format, args...)) },
		Pick: func(ext []string, folder string, use func(string)) {
			if len(ext) != 1 || ext[0] != ".safetensors" || folder != "/loras" {
				t.Errorf("the dialog opens for %v in %q", ext, folder)
			}
			use("/loras/ink.safetensors")
		},
		Folder: "/loras",
	})
	p.Pick()
	if len(m.Draft().LoRAs) != 1 || len(said) != 1 || said[0] != "The LoRA list was not saved: disk full" {
		t.Fatalf("picking a file: LoRAs %v, said %q", m.Draft().LoRAs, said)
	}
	if got := p.Add([]string{"/loras/ink.safetensors", "/elsewhere/turbo.safetensors"}); got != "LoRA added: turbo.safetensors. ink.safetensors is already in the list." {
		t.Errorf("adding says %q", got)
	}
	if len(m.Draft().LoRAs) != 2 {
		t.Errorf("the draft has %v", m.Draft().LoRAs)
	}
}
