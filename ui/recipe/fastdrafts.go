package recipe

import (
	"fmt"
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"easel/app/download"
	"easel/app/modelsetup"
	"easel/engine/lora"
	"easel/ui/model"
	"easel/ui/setup"
)

// Draft / Final switch labels.
const (
	ModeDraft = "Draft"
	ModeFinal = "Final"
)

// FastDraftsActions are what the fast-draft controls need of the window. LoRADir is the LoRA
// folder a download goes into ("": unknown, nothing is downloaded); Hub is where from (nil: the
// Hugging Face hub, or the mirror HF_ENDPOINT names). LoRAsChanged runs after the switch or a
// download changed the draft's LoRA list (the window keeps the list); Ask shows the download
// dialog through the window's question stack, over Parent; Do runs f on the UI goroutine.
type FastDraftsActions struct {
	LoRADir      string
	Hub          *download.Remote
	LoRAsChanged func()
	Ask          func(dialog.Dialog)
	Parent       fyne.Window
	Do           func(f func())
}

// FastDrafts are the LoRA section's fast-draft controls: the "Draft / Final" switch (shown once
// a LoRA with a sampling preset is in the list) and the offer to download a published few-step
// LoRA. They change the draft through the model's UseDrafts and UseFinal.
type FastDrafts struct {
	m   *model.Window
	act FastDraftsActions
	// Presets are the LoRA section's presets, by path (LoRAs.Presets); a download adds its own.
	Presets  map[string]*lora.Preset
	Mode     *widget.RadioGroup
	Hint     *widget.Label
	Download *widget.Button
	Box      *fyne.Container
	// Panel and Dialog are the download dialog's panel and the dialog, while it is open.
	Panel  *setup.FastDraftPanel
	Dialog dialog.Dialog
}

// NewFastDrafts builds the controls over m's draft; Presets is set once the LoRA section is
// built (it reads them).
func NewFastDrafts(m *model.Window, act FastDraftsActions) *FastDrafts {
	f := &FastDrafts{m: m, act: act, Presets: map[string]*lora.Preset{}}
	f.Mode = widget.NewRadioGroup([]string{ModeDraft, ModeFinal}, func(v string) { f.switched(v) })
	f.Mode.Horizontal = true
	f.Mode.Hide()
	f.Hint = widget.NewLabel("")
	f.Hint.Wrapping = fyne.TextWrapWord
	f.Hint.Importance = widget.LowImportance
	f.Download = widget.NewButton("Fast drafts: download a few-step LoRA…", f.offerDownload)
	f.Box = container.NewVBox(f.Mode, f.Hint, f.Download)
	return f
}

// draftLoRA is the few-step LoRA the Draft setting uses: the switch's own, else the first LoRA in
// the list with a preset.
func (f *FastDrafts) draftLoRA() (string, *lora.Preset) {
	d := f.m.Draft()
	if d.Mode.LoRA != "" {
		return d.Mode.LoRA, d.Mode.Preset
	}
	for _, l := range d.LoRAs {
		if pr := f.Presets[l.Path]; pr != nil {
			return l.Path, pr
		}
	}
	return "", nil
}

// Refresh shows the switch when a few-step LoRA is known (the LoRA section calls it after it
// showed the draft, and when a preset was read).
func (f *FastDrafts) Refresh() {
	path, pr := f.draftLoRA()
	if path == "" {
		f.Mode.Hide()
		f.Hint.SetText("")
		f.Hint.Hide()
		return
	}
	f.Mode.Show()
	want := ModeFinal
	if f.m.Draft().Mode.On {
		want = ModeDraft
	}
	if f.Mode.Selected != want {
		f.Mode.Selected = want
		f.Mode.Refresh()
	}
	f.Hint.SetText(f.plainly(path, pr))
	f.Hint.Show()
}

// switched applies the switch: Draft enables the few-step LoRA and its preset, Final goes back
// to the full schedule.
func (f *FastDrafts) switched(v string) {
	path, pr := f.draftLoRA()
	on := f.m.Draft().Mode.On
	switch {
	case path == "":
		return
	case v == ModeDraft && !on:
		f.m.UseDrafts(path, pr)
	case v == ModeFinal && on:
		f.m.UseFinal()
	default:
		return
	}
	call(f.act.LoRAsChanged)
}

// offerDownload opens the download dialog.
func (f *FastDrafts) offerDownload() {
	if f.act.LoRADir == "" {
		f.m.Say(model.NoticeWarning, "The LoRA folder is unknown, so nothing can be downloaded into it; add a LoRA file with Add LoRA….")
		return
	}
	remote := f.act.Hub
	if remote == nil {
		remote = modelsetup.OfficialRemote()
	}
	f.Panel = setup.NewFastDraftPanel(remote, f.act.LoRADir, f.downloaded, f.act.Do)
	scroll := container.NewVScroll(f.Panel.Object())
	scroll.SetMinSize(fyne.NewSize(640, 480))
	f.Dialog = dialog.NewCustom("Fast drafts", "Close", scroll, f.act.Parent)
	f.Dialog.SetOnClosed(f.Panel.Stop)
	if f.act.Ask != nil {
		f.act.Ask(f.Dialog)
	} else {
		f.Dialog.Show()
	}
}

// downloaded adds a downloaded few-step LoRA and switches to Draft with it.
func (f *FastDrafts) downloaded(path string, pr *lora.Preset) {
	f.Presets[path] = pr
	f.m.UseDrafts(path, pr)
	call(f.act.LoRAsChanged)
	d := f.m.Draft()
	f.m.Say(model.NoticeWarning, "Drafts now use the few-step LoRA %s: %d steps. Switch to Final for the finished image: all %d steps, without the LoRA.", filepath.Base(path), d.Steps, d.FinalSteps())
}

// plainly says what each side of the switch does, in steps an artist counts: "Draft: 8 steps with
// the few-step LoRA NAME, for quick looks. Final: all 40 steps, without the LoRA."
func (f *FastDrafts) plainly(path string, pr *lora.Preset) string {
	d := f.m.Draft()
	steps := d.Steps // while drafting, the drafts' own
	if !d.Mode.On {
		steps = draftSteps(pr, steps)
	}
	return fmt.Sprintf("Draft: %d steps with the few-step LoRA %s, for quick looks. Final: all %d steps, without the LoRA.",
		steps, filepath.Base(path), d.FinalSteps())
}

// draftSteps is the number of steps a draft takes: its preset's, or steps when there is none.
func draftSteps(pr *lora.Preset, steps int) int {
	if pr != nil && pr.Steps > 0 {
		return pr.Steps
	}
	return steps
}
