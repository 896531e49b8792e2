package ui

import (
	"fmt"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"easel/app/download/downloadtest"
	"easel/app/fastdraft"
	"easel/ui/recipe"
)

// TestFastDraftDownloadThenDraftAndFinal: the LoRA panel offers a published few-step LoRA (the
// license and size first), downloads it into the LoRA folder, and the Draft / Final switch then
// applies its preset for drafts and all the steps, without the LoRA, for the final pass; the
// switch's hint and notice say so in steps.
func TestFastDraftDownloadThenDraftAndFinal(t *testing.T) {
	e := fastdraft.Catalogue[1]
	hub, err := downloadtest.NewHub("", e.Repo, map[string][]byte{e.File: []byte(strings.Repeat("x", 200_000)), "LICENSE": []byte("Apache-2.0")})
	if err != nil {
		t.Fatal(err)
	}
	remote, stop := hub.Start()
	t.Cleanup(stop)
	h := newHarnessWith(t, 0, func(h *harness, d *Deps) {
		d.LoRADir = h.dir
		d.Hub = remote
	})
	s := h.s
	s.model.SetSteps(40)
	fast := s.fast
	if fast.Mode.Visible() {
		t.Fatal("the Draft / Final switch shows without a few-step LoRA")
	}
	test.Tap(fast.Download)
	p := fast.Panel
	if p == nil {
		t.Fatal("no download offer")
	}
	p.SelectForTest(1)
	test.Tap(p.AskButton())
	h.pump("the license and the size", func() bool { return p.Planned() })
	if !strings.Contains(p.LicenseText(), "Apache-2.0") {
		t.Fatalf("license %q", p.LicenseText())
	}
	p.AcceptForTest()
	test.Tap(p.StartButton())
	h.pump("the download", func() bool { return s.draft().Mode.On })
	if s.draft().Steps != e.Preset.Steps || len(s.draft().LoRAs) != 1 || !s.draft().LoRAs[0].Enabled || !fast.Mode.Visible() || fast.Mode.Selected != recipe.ModeDraft {
		t.Fatalf("after the download: steps %d, LoRAs %+v, switch %q", s.draft().Steps, s.draft().LoRAs, fast.Mode.Selected)
	}
	// The switch's hint and the notice say what each pass does in steps, not schedules.
	for what, text := range map[string]string{"hint": fast.Hint.Text, "notice": s.message.Text} {
		if strings.Contains(text, "schedule") || !strings.Contains(text, "all 40 steps, without") {
			t.Errorf("the Draft / Final %s reads %q; want Final as all 40 steps without the LoRA, in plain words", what, text)
		}
	}
	if want := fmt.Sprintf("Draft: %d steps with the few-step LoRA", e.Preset.Steps); !strings.Contains(fast.Hint.Text, want) {
		t.Errorf("the hint reads %q; want %q", fast.Hint.Text, want)
	}
	fast.Mode.SetSelected(recipe.ModeFinal)
	if s.draft().Mode.On || s.draft().Steps != 40 || s.draft().LoRAs[0].Enabled {
		t.Errorf("Final: steps %d, LoRAs %+v", s.draft().Steps, s.draft().LoRAs)
	}
	fast.Mode.SetSelected(recipe.ModeDraft)
	if !s.draft().Mode.On || s.draft().Steps != e.Preset.Steps || !s.draft().LoRAs[0].Enabled {
		t.Errorf("Draft again: steps %d, LoRAs %+v", s.draft().Steps, s.draft().LoRAs)
	}
	fast.Dialog.Hide()
}
