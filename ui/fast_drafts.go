package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"easel/app/modelsetup"
	"easel/engine/lora"
	"easel/ui/setup"
)

// Draft / Final switch labels.
const (
	modeDraft = "Draft"
	modeFinal = "Final"
)

// fastDrafts are the LoRA panel's fast-draft controls: the "Draft / Final" switch (shown once a
// LoRA with a sampling preset is in the list) and the offer to download a published few-step
// LoRA.
type fastDrafts struct {
	s        *window
	presets  map[string]*lora.Preset // the LoRA panel's presets, by path
	mode     *widget.RadioGroup
	hint     *widget.Label
	download *widget.Button
	box      *fyne.Container
	// panel is the download dialog's panel while it is open (tests drive it).
	panel  *setup.FastDraftPanel
	dialog dialog.Dialog
}

func newFastDrafts(s *window, presets map[string]*lora.Preset) *fastDrafts {
	f := &fastDrafts{s: s, presets: presets}
	f.mode = widget.NewRadioGroup([]string{modeDraft, modeFinal}, func(v string) { f.switched(v) })
	f.mode.Horizontal = true
	f.mode.Hide()
	f.hint = widget.NewLabel("")
	f.hint.Wrapping = fyne.TextWrapWord
	f.hint.Importance = widget.LowImportance
	f.download = widget.NewButton("Fast drafts: download a few-step LoRA…", f.offerDownload)
	f.box = container.NewVBox(f.mode, f.hint, f.download)
	return f
}

// draftLoRA is the few-step LoRA the Draft setting uses: the switch's own, else the first LoRA in
// the list with a preset.
func (f *fastDrafts) draftLoRA() (string, *lora.Preset) {
	if m := f.s.draft().Mode; m.LoRA != "" {
		return m.LoRA, m.Preset
	}
	for _, l := range f.s.draft().LoRAs {
		if pr := f.presets[l.Path]; pr != nil {
			return l.Path, pr
		}
	}
	return "", nil
}

// refresh shows the switch when a few-step LoRA is known.
func (f *fastDrafts) refresh() {
	path, pr := f.draftLoRA()
	if path == "" {
		f.mode.Hide()
		f.hint.SetText("")
		f.hint.Hide()
		return
	}
	f.mode.Show()
	want := modeFinal
	if f.s.draft().Mode.On {
		want = modeDraft
	}
	if f.mode.Selected != want {
		f.mode.Selected = want
		f.mode.Refresh()
	}
	f.hint.SetText(f.plainly(path, pr))
	f.hint.Show()
}

// switched applies the switch: Draft enables the few-step LoRA and its preset, Final goes back
// to the full schedule.
func (f *fastDrafts) switched(v string) {
	path, pr := f.draftLoRA()
	switch {
	case path == "":
		return
	case v == modeDraft && !f.s.draft().Mode.On:
		f.s.model.UseDrafts(path, pr)
	case v == modeFinal && f.s.draft().Mode.On:
		f.s.model.UseFinal()
	default:
		return
	}
	f.s.lorasChanged()
}

// offerDownload opens the download dialog.
func (f *fastDrafts) offerDownload() {
	if f.s.deps.LoRADir == "" {
		f.s.say("The LoRA folder is unknown, so nothing can be downloaded into it; add a LoRA file with Add LoRA….")
		return
	}
	remote := f.s.deps.Hub
	if remote == nil {
		remote = modelsetup.OfficialRemote()
	}
	f.panel = setup.NewFastDraftPanel(remote, f.s.deps.LoRADir, f.downloaded, f.s.deps.Do)
	scroll := container.NewVScroll(f.panel.Object())
	scroll.SetMinSize(fyne.NewSize(640, 480))
	f.dialog = dialog.NewCustom("Fast drafts", "Close", scroll, f.s.win)
	f.dialog.SetOnClosed(f.panel.Stop)
	f.s.show(f.dialog)
}

// downloaded adds a downloaded few-step LoRA and switches to Draft with it.
func (f *fastDrafts) downloaded(path string, pr *lora.Preset) {
	f.presets[path] = pr
	f.s.model.UseDrafts(path, pr)
	f.s.lorasChanged()
	f.s.say("Drafts now use the few-step LoRA %s: %d steps. Switch to Final for the finished image: all %d steps, without the LoRA.", shortPath(path), f.s.draft().Steps, f.s.draftCopy().FinalSteps())
}

// plainly says what each side of the switch does, in steps an artist counts: "Draft: 8 steps with
// the few-step LoRA NAME, for quick looks. Final: all 40 steps, without the LoRA."
func (f *fastDrafts) plainly(path string, pr *lora.Preset) string {
	steps := f.s.draft().Steps // while drafting, the drafts' own
	if !f.s.draft().Mode.On {
		steps = draftSteps(pr, steps)
	}
	return fmt.Sprintf("Draft: %d steps with the few-step LoRA %s, for quick looks. Final: all %d steps, without the LoRA.",
		steps, shortPath(path), f.s.draftCopy().FinalSteps())
}

// draftSteps is the number of steps a draft takes: its preset's, or steps when there is none.
func draftSteps(pr *lora.Preset, steps int) int {
	if pr != nil && pr.Steps > 0 {
		return pr.Steps
	}
	return steps
}
