package ui

import (
	"fmt"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/settings"
	"easel/engine/lora"
	"easel/engine/mmapfile"
	"easel/engine/safetensors"
)

// lorasPanel is the LoRA list in the left column: each LoRA with an enable toggle, a strength
// slider (−2…2) and a remove button; LoRAs are added with a button or by dropping .safetensors
// files on the window. When an enabled LoRA carries a sampling preset (a few-step LoRA), a button
// offers its settings.
type lorasPanel struct {
	s      *window
	list   *fyne.Container
	count  *widget.Label
	offer  *widget.Button
	fast   *fastDrafts
	rows   []*loraRow
	box    fyne.CanvasObject
	preset map[string]*lora.Preset // by path, once read (nil: the file has none)
}

// loraRow is one LoRA's controls.
type loraRow struct {
	enabled  *widget.Check
	strength *widget.Slider
	value    *widget.Label
	remove   *widget.Button
}

func newLorasPanel(s *window) *lorasPanel {
	p := &lorasPanel{s: s, list: container.NewVBox(), count: widget.NewLabel(""), preset: map[string]*lora.Preset{}}
	add := widget.NewButtonWithIcon("Add LoRA…", theme.FolderOpenIcon(), s.pickLoRA)
	hint := widget.NewLabel("Drop .safetensors LoRAs on the window. Images remember their LoRAs; restoring one finds them by content in the LoRA folder or beside the image.")
	hint.Wrapping = fyne.TextWrapWord
	hint.Importance = widget.LowImportance
	p.offer = widget.NewButton("", nil)
	p.offer.Hide()
	p.fast = newFastDrafts(s, p.preset)
	p.box = container.NewVBox(container.NewBorder(nil, nil, nil, p.count), add, hint, p.list, p.offer, p.fast.box)
	p.refresh()
	return p
}

// refresh rebuilds the rows from the draft.
func (p *lorasPanel) refresh() {
	ls := p.s.draft().LoRAs
	n := 0
	for _, l := range ls {
		if l.Enabled {
			n++
		}
	}
	p.count.SetText(fmt.Sprintf("%d of %d on", n, len(ls)))
	p.rows = p.rows[:0]
	objs := make([]fyne.CanvasObject, 0, len(ls))
	for i, l := range ls {
		objs = append(objs, p.row(i, l))
	}
	p.list.Objects = objs
	p.list.Refresh()
	if len(ls) > 0 && p.s.sections != nil {
		p.s.sections.Open(sectionLoRAs)
	}
	p.refreshOffer()
}

func (p *lorasPanel) row(i int, l settings.LoRA) fyne.CanvasObject {
	r := &loraRow{}
	name := strings.TrimSuffix(filepath.Base(l.Path), filepath.Ext(l.Path))
	r.enabled = widget.NewCheck("", nil)
	label := widget.NewLabel(name) // truncated: a long file name never widens the column
	label.Truncation = fyne.TextTruncateEllipsis
	r.enabled.SetChecked(l.Enabled)
	r.enabled.OnChanged = func(on bool) { p.s.setLoRAEnabled(i, on) }
	r.value = widget.NewLabel(strengthText(l.Strength))
	r.strength = widget.NewSlider(settings.MinLoRAStrength, settings.MaxLoRAStrength)
	r.strength.Step = 0.05
	r.strength.SetValue(l.Strength)
	r.strength.OnChanged = func(v float64) {
		r.value.SetText(strengthText(v))
		p.s.setLoRAStrength(i, v)
	}
	r.remove = widget.NewButtonWithIcon("", theme.DeleteIcon(), func() { p.s.removeLoRA(i) })
	p.rows = append(p.rows, r)
	return container.NewVBox(
		container.NewBorder(nil, nil, r.enabled, r.remove, label),
		container.NewBorder(nil, nil, nil, r.value, r.strength),
	)
}

func strengthText(v float64) string { return fmt.Sprintf("%.2f", v) }

// refreshOffer shows the preset of the first enabled LoRA that has one, reading presets off the
// UI goroutine the first time a file is seen.
func (p *lorasPanel) refreshOffer() {
	p.offer.Hide()
	p.fast.refresh()
	for _, l := range p.s.draft().LoRAs {
		if !l.Enabled {
			continue
		}
		pr, seen := p.preset[l.Path]
		if !seen {
			p.readPreset(l.Path)
			continue
		}
		if pr == nil {
			continue
		}
		if p.s.draft().Preset == pr {
			p.offer.SetText("Using " + pr.Describe())
			p.offer.OnTapped = nil
		} else {
			p.offer.SetText("Use this LoRA's settings: " + pr.Describe())
			p.offer.OnTapped = func() { p.s.usePreset(pr) }
		}
		p.offer.Show()
		return
	}
}

// readPreset reads a file's preset (its metadata; else the known-file table, which needs the
// file's SHA-256) in the background, then refreshes the offer.
func (p *lorasPanel) readPreset(path string) {
	p.preset[path] = nil
	go func() {
		pr, _ := presetOf(path)
		p.s.deps.Do(func() {
			p.preset[path] = pr
			if pr != nil {
				p.refreshOffer()
			}
		})
	}()
}

// presetOf reads a LoRA file's preset; a fault in its mapping (the file changed or went away
// while it was read) is an error, not the end of the app.
func presetOf(path string) (pr *lora.Preset, err error) {
	defer mmapfile.Recover(&err)
	defer mmapfile.Guard()()
	st, err := safetensors.Open(path)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	sum := ""
	if _, ok := st.Metadata[lora.PresetMetadataKey]; !ok && (len(lora.KnownPresets) > 0 || lora.HasPresetFile(path)) {
		sum, _ = lora.Hashes(st.Bytes())
	}
	return lora.PresetForFile(path, st.Metadata, sum)
}

// pickLoRA opens a file dialog for a .safetensors LoRA, starting in the LoRA folder.
func (s *window) pickLoRA() {
	s.pickFile([]string{".safetensors"}, s.deps.LoRADir, func(path string) { s.addLoRAs([]string{path}) })
}

// addLoRAs adds LoRA files to the list (enabled, strength 1).
func (s *window) addLoRAs(paths []string) string {
	var added, dup []string
	for _, path := range paths {
		if s.model.AddLoRA(path) {
			added = append(added, filepath.Base(path))
		} else {
			dup = append(dup, filepath.Base(path))
		}
	}
	s.lorasChanged()
	var msg []string
	if len(added) > 0 {
		msg = append(msg, "LoRA added: "+strings.Join(added, ", ")+".")
	}
	if len(dup) > 0 {
		msg = append(msg, strings.Join(dup, ", ")+" is already in the list.")
	}
	return strings.Join(msg, " ")
}

func (s *window) setLoRAEnabled(i int, on bool) {
	if d := s.draft(); i < len(d.LoRAs) && d.LoRAs[i].Enabled != on {
		s.model.EnableLoRA(i, on)
		s.lorasChanged()
	}
}

// setLoRAStrength changes a strength: nothing is reloaded (the pipeline keeps the file loaded).
func (s *window) setLoRAStrength(i int, v float64) {
	if d := s.draft(); i < len(d.LoRAs) && d.LoRAs[i].Strength != v {
		s.model.SetLoRAStrength(i, v)
		s.persistLoRAs()
	}
}

func (s *window) removeLoRA(i int) {
	s.model.RemoveLoRA(i)
	s.lorasChanged()
}

// lorasChanged shows and saves the list and re-predicts memory.
func (s *window) lorasChanged() {
	s.loras.refresh()
	s.persistLoRAs()
	s.draftChanged()
}

// persistLoRAs saves the list when the window has a store.
func (s *window) persistLoRAs() {
	if s.deps.LoRAStore == nil {
		return
	}
	if err := s.deps.LoRAStore.Save(s.draft().LoRAs); err != nil {
		s.say("The LoRA list was not saved: %v", err)
	}
}

// usePreset applies a LoRA's sampling preset to the controls.
func (s *window) usePreset(pr *lora.Preset) {
	s.model.UsePreset(pr)
	s.loras.refreshOffer()
	s.draftChanged()
	s.say("Using %s.", pr.Describe())
}
