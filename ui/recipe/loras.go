package recipe

import (
	"fmt"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/compose"
	"easel/app/settings"
	"easel/engine/lora"

	"easel/ui/model"
)

// LoRAsActions are what the LoRA section asks of the shell. Pick opens the file dialog for one
// file with one of extensions (starting in folder when it is set) and hands the chosen path to
// use; Folder is the LoRA folder. Save keeps the list after each change (nil: it is kept in
// memory only); Say puts a notice in the window. Shown brings the section into view when LoRAs
// came; ReadPreset reads a file's preset (nil: it has none), called off the UI goroutine; Do runs
// f on the UI goroutine; Refreshed runs after the section showed the draft (the fast-draft
// controls follow it). Any may be nil but ReadPreset and Do, which go together.
type LoRAsActions struct {
	Pick       func(extensions []string, folder string, use func(path string))
	Folder     string
	Save       func(ls []settings.LoRA) error
	Say        func(format string, args ...any)
	Shown      func()
	ReadPreset func(path string) *lora.Preset
	Do         func(func())
	Refreshed  func()
}

// LoRAs is the LoRA list in the recipe column: each LoRA with an enable toggle, a strength slider
// (−2…2) and a remove button; when an enabled LoRA carries a sampling preset (a few-step LoRA), a
// button offers its settings. It follows the model's draft: the rows are rebuilt only when the
// files change (a slider being dragged is never replaced), their values set in place otherwise.
type LoRAs struct {
	Box   fyne.CanvasObject
	Count *widget.Label
	List  *fyne.Container
	Offer *widget.Button
	Rows  []*LoRARow
	// Presets are the presets read so far, by path (nil: the file has none).
	Presets map[string]*lora.Preset
	paths   []string // the files the rows show
	act     LoRAsActions
	m       *model.Window
}

// LoRARow is one LoRA's controls.
type LoRARow struct {
	Enabled  *widget.Check
	Strength *widget.Slider
	Value    *widget.Label
	Remove   *widget.Button
}

// NewLoRAs builds the section over m's draft, with extra (the fast-draft controls) under it.
func NewLoRAs(m *model.Window, extra fyne.CanvasObject, act LoRAsActions) *LoRAs {
	p := &LoRAs{Count: widget.NewLabel(""), List: container.NewVBox(), Presets: map[string]*lora.Preset{}, act: act, m: m}
	add := widget.NewButtonWithIcon("Add LoRA…", theme.FolderOpenIcon(), p.Pick)
	hint := widget.NewLabel("Drop .safetensors LoRAs on the window. Images remember their LoRAs; restoring one finds them by content in the LoRA folder or beside the image.")
	hint.Wrapping = fyne.TextWrapWord
	hint.Importance = widget.LowImportance
	p.Offer = widget.NewButton("", nil)
	p.Offer.Hide()
	objs := []fyne.CanvasObject{container.NewBorder(nil, nil, nil, p.Count), add, hint, p.List, p.Offer}
	if extra != nil {
		objs = append(objs, extra)
	}
	p.Box = container.NewVBox(objs...)
	p.show(m.Draft(), true)
	m.Observe(model.DraftChanged, func(model.Change) { p.show(m.Draft(), false) })
	return p
}

// show puts the draft's LoRAs in the rows: rebuilt when the files changed (always when all),
// their toggles and sliders set in place otherwise; then the preset offer.
func (p *LoRAs) show(d compose.Draft, all bool) {
	ls := d.LoRAs
	n := 0
	paths := make([]string, len(ls))
	for i, l := range ls {
		paths[i] = l.Path
		if l.Enabled {
			n++
		}
	}
	p.Count.SetText(fmt.Sprintf("%d of %d on", n, len(ls)))
	if all || strings.Join(paths, "\n") != strings.Join(p.paths, "\n") {
		p.paths = paths
		p.Rows = p.Rows[:0]
		objs := make([]fyne.CanvasObject, 0, len(ls))
		for i, l := range ls {
			objs = append(objs, p.row(i, l))
		}
		p.List.Objects = objs
		p.List.Refresh()
		if len(ls) > 0 && !all {
			call(p.act.Shown)
		}
	} else {
		for i, l := range ls {
			r := p.Rows[i]
			if r.Enabled.Checked != l.Enabled {
				r.Enabled.SetChecked(l.Enabled)
			}
			if r.Strength.Value != l.Strength {
				r.Strength.SetValue(l.Strength)
			}
		}
	}
	p.refreshOffer(d)
	call(p.act.Refreshed)
}

func (p *LoRAs) row(i int, l settings.LoRA) fyne.CanvasObject {
	r := &LoRARow{}
	name := strings.TrimSuffix(filepath.Base(l.Path), filepath.Ext(l.Path))
	r.Enabled = widget.NewCheck("", nil)
	label := widget.NewLabel(name) // truncated: a long file name never widens the column
	label.Truncation = fyne.TextTruncateEllipsis
	r.Enabled.SetChecked(l.Enabled)
	r.Enabled.OnChanged = func(on bool) { p.SetEnabled(i, on) }
	r.Value = widget.NewLabel(strengthText(l.Strength))
	r.Strength = widget.NewSlider(settings.MinLoRAStrength, settings.MaxLoRAStrength)
	r.Strength.Step = 0.05
	r.Strength.SetValue(l.Strength)
	r.Strength.OnChanged = func(v float64) {
		r.Value.SetText(strengthText(v))
		p.SetStrength(i, v)
	}
	r.Remove = widget.NewButtonWithIcon("", theme.DeleteIcon(), func() { p.Remove(i) })
	p.Rows = append(p.Rows, r)
	return container.NewVBox(
		container.NewBorder(nil, nil, r.Enabled, r.Remove, label),
		container.NewBorder(nil, nil, nil, r.Value, r.Strength),
	)
}

func strengthText(v float64) string { return fmt.Sprintf("%.2f", v) }

// refreshOffer shows the preset of the first enabled LoRA that has one, reading presets off the
// UI goroutine the first time a file is seen.
func (p *LoRAs) refreshOffer(d compose.Draft) {
	p.Offer.Hide()
	for _, l := range d.LoRAs {
		if !l.Enabled {
			continue
		}
		pr, seen := p.Presets[l.Path]
		if !seen {
			p.readPreset(l.Path)
			continue
		}
		if pr == nil {
			continue
		}
		if d.Preset == pr {
			p.Offer.SetText("Using " + pr.Describe())
			p.Offer.OnTapped = nil
		} else {
			p.Offer.SetText("Use this LoRA's settings: " + pr.Describe())
			p.Offer.OnTapped = func() { p.UsePreset(pr) }
		}
		p.Offer.Show()
		return
	}
}

// readPreset reads a file's preset in the background, then shows the offer again.
func (p *LoRAs) readPreset(path string) {
	p.Presets[path] = nil
	if p.act.ReadPreset == nil || p.act.Do == nil {
		return
	}
	go func() {
		pr := p.act.ReadPreset(path)
		p.act.Do(func() {
			p.Presets[path] = pr
			if pr != nil {
				p.refreshOffer(p.m.Draft())
				call(p.act.Refreshed)
			}
		})
	}()
}
