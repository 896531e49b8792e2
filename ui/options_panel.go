package ui

import (
	"fmt"
	"strconv"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/compose"
	"easel/app/memplan"
	"easel/app/settings"
)

// Size choices in the size menu besides the presets.
const (
	sizeCustomLabel    = "Custom"
	sizeFromImageLabel = "From the last condition image"
)

// squareSides are the square sizes the size menu offers besides the aspect ratios (a custom size
// underneath), and squareLabels their names there.
var (
	squareSides  = []int{512, 768, 1024}
	squareLabels = []string{"512×512", "768×768", "1024×1024"}
)

// squareLabel is the size menu's name for a custom w×h that is one of the squares, or "".
func squareLabel(w, h int) string {
	for i, side := range squareSides {
		if w == side && h == side {
			return squareLabels[i]
		}
	}
	return ""
}

// optionsPanel holds size, steps, CFG, seed, backend and model.
type optionsPanel struct {
	s *window

	sizeSelect *widget.Select
	scaleRadio *widget.RadioGroup
	customW    *escEntry
	customH    *escEntry
	customRow  fyne.CanvasObject
	sizeResult *widget.Label
	steps      *escEntry
	count      *escEntry // the batch's images, 1–MaxWindowCount
	cfg        *widget.Slider
	cfgLabel   *widget.Label
	seedMode   *widget.RadioGroup
	seedEntry  *escEntry
	lastSeed   *widget.Label
	copySeed   *widget.Button
	backend    *widget.Select
	modelLabel *widget.Label
	form       *widget.Form
	box        fyne.CanvasObject // the everyday settings
	advanced   *widget.Form      // backend and model

	loadingDraft bool              // true while load() sets widgets, so their callbacks do not echo back
	problems     map[string]string // what is wrong with each field now, by its name
}

func newOptionsPanel(s *window) *optionsPanel {
	p := &optionsPanel{s: s, problems: map[string]string{}}
	var sizeNames []string
	for _, a := range compose.Aspects {
		sizeNames = append(sizeNames, a.Name)
	}
	sizeNames = append(sizeNames, squareLabels...)
	sizeNames = append(sizeNames, sizeCustomLabel, sizeFromImageLabel)
	p.sizeSelect = widget.NewSelect(sizeNames, func(v string) { p.sizeChosen(v) })
	p.scaleRadio = widget.NewRadioGroup([]string{"1K", "2K"}, func(v string) {
		if p.loadingDraft {
			return
		}
		sc := compose.Scale1K
		if v == "2K" {
			sc = compose.Scale2K
		}
		s.model.SetScale(sc)
		s.draftChanged()
	})
	p.scaleRadio.Horizontal = true
	p.scaleRadio.Required = true
	p.customW, p.customH = newEscEntry(s), newEscEntry(s)
	p.customW.OnChanged = func(string) { p.customChanged() }
	p.customH.OnChanged = func(string) { p.customChanged() }
	// Leaving a size field shows the size the run will use in it (snapped, or clamped to the
	// model's range), so the field never says one size while another is made.
	p.customW.OnBlur = func() { p.showEffective(p.customW, p.s.draft().CustomW) }
	p.customH.OnBlur = func() { p.showEffective(p.customH, p.s.draft().CustomH) }
	p.customRow = container.NewGridWithColumns(3, p.customW, widget.NewLabel("×"), p.customH)
	p.sizeResult = widget.NewLabel("")
	p.sizeResult.Truncation = fyne.TextTruncateEllipsis // one line in the form; a problem is said in full under Generate

	p.steps = newEscEntry(s)
	p.steps.OnChanged = func(v string) {
		if p.loadingDraft {
			return
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 || n > 200 {
			p.problem("Steps", "Steps: give a whole number from 2 to 200.")
			return
		}
		p.problem("Steps", "")
		s.model.SetSteps(n)
	}
	p.count = newEscEntry(s)
	p.count.OnChanged = func(v string) {
		if p.loadingDraft {
			return
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxWindowCount {
			p.problem("Images", fmt.Sprintf("Images: give a whole number from 1 to %d.", MaxWindowCount))
			return
		}
		p.problem("Images", "")
		s.model.SetCount(n)
		s.draftChanged()
	}
	p.cfgLabel = widget.NewLabel("")
	p.cfg = widget.NewSlider(1, 10)
	p.cfg.Step = 0.5
	p.cfg.OnChanged = func(v float64) {
		p.cfgLabel.SetText(cfgText(v))
		if p.loadingDraft {
			return
		}
		s.model.SetCFG(v)
		s.draftChanged()
	}

	p.seedMode = widget.NewRadioGroup([]string{"Random", "Fixed"}, func(v string) {
		if p.loadingDraft {
			return
		}
		s.model.SetRandomSeed(v != "Fixed")
		if v != "Fixed" {
			p.seedEntry.Disable()
		} else {
			p.seedEntry.Enable()
			if p.seedEntry.Text == "" && s.haveSeed {
				p.seedEntry.SetText(strconv.FormatUint(s.lastSeed, 10))
			}
		}
	})
	p.seedMode.Horizontal = true
	p.seedMode.Required = true
	p.seedEntry = newEscEntry(s)
	p.seedEntry.SetPlaceHolder("seed")
	p.seedEntry.OnChanged = func(v string) {
		if p.loadingDraft {
			return
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			if v != "" {
				p.problem("Seed", fmt.Sprintf("Seed: give a whole number from 0 to %d.", uint64(1<<64-1)))
			}
			return
		}
		p.problem("Seed", "")
		s.model.SetSeed(n)
	}
	p.lastSeed = widget.NewLabel("Last seed: —")
	p.copySeed = widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), func() {
		if cb := s.clipboard(); cb != nil && s.haveSeed {
			cb.SetContent(strconv.FormatUint(s.lastSeed, 10))
			s.say("Seed %d copied.", s.lastSeed)
		}
	})
	p.copySeed.Disable()

	p.backend = widget.NewSelect([]string{"Auto", "Metal", "CPU"}, func(v string) {
		if p.loadingDraft {
			return
		}
		s.setBackend(map[string]settings.Backend{"Auto": settings.BackendAuto, "Metal": settings.BackendMetal, "CPU": settings.BackendCPU}[v])
	})
	p.modelLabel = widget.NewLabel("")
	p.modelLabel.Truncation = fyne.TextTruncateEllipsis
	chooseModel := widget.NewButton("Choose…", s.pickModel)

	// The everyday settings in a compact block, always visible under the prompt; the backend and
	// the model under Advanced.
	p.form = widget.NewForm(
		widget.NewFormItem("Size", container.NewBorder(nil, nil, nil, p.scaleRadio, p.sizeSelect)),
		widget.NewFormItem("", container.NewVBox(p.customRow, p.sizeResult)),
		widget.NewFormItem("Steps", container.NewGridWithColumns(3, p.steps, widget.NewLabelWithStyle("Images", fyne.TextAlignTrailing, fyne.TextStyle{}), p.count)),
		widget.NewFormItem("CFG scale", container.NewBorder(nil, nil, nil, p.cfgLabel, p.cfg)),
		widget.NewFormItem("Seed", container.NewBorder(nil, nil, p.seedMode, nil, p.seedEntry)),
		widget.NewFormItem("", container.NewBorder(nil, nil, nil, p.copySeed, p.lastSeed)),
	)
	p.box = p.form
	p.advanced = widget.NewForm(
		widget.NewFormItem("Backend", p.backend),
		widget.NewFormItem("Model", container.NewBorder(nil, nil, nil, chooseModel, p.modelLabel)),
	)
	p.load(s.draft())
	return p
}

func cfgText(v float64) string {
	if v <= 1 {
		return "1 (off)"
	}
	return fmt.Sprintf("%.1f", v)
}

// load shows a draft's settings.
func (p *optionsPanel) load(d compose.Draft) {
	p.loadingDraft = true
	defer func() { p.loadingDraft = false }()
	switch d.Size {
	case compose.SizePreset:
		p.sizeSelect.SetSelected(d.Aspect.Name)
	case compose.SizeCustom:
		if sq := squareLabel(d.CustomW, d.CustomH); sq != "" {
			p.sizeSelect.SetSelected(sq)
		} else {
			p.sizeSelect.SetSelected(sizeCustomLabel)
		}
	default:
		p.sizeSelect.SetSelected(sizeFromImageLabel)
	}
	p.scaleRadio.SetSelected(map[compose.Scale]string{compose.Scale1K: "1K", compose.Scale2K: "2K"}[d.Scale])
	p.customW.SetText(strconv.Itoa(d.CustomW))
	p.customH.SetText(strconv.Itoa(d.CustomH))
	p.steps.SetText(strconv.Itoa(d.Steps))
	p.count.SetText(strconv.Itoa(max(d.Count, 1)))
	p.cfg.SetValue(max(d.CFG, 1))
	p.cfgLabel.SetText(cfgText(d.CFG))
	if d.RandomSeed {
		p.seedMode.SetSelected("Random")
		p.seedEntry.Disable()
	} else {
		p.seedMode.SetSelected("Fixed")
		p.seedEntry.Enable()
		p.seedEntry.SetText(strconv.FormatUint(d.Seed, 10))
	}
	p.backend.SetSelected(map[settings.Backend]string{settings.BackendAuto: "Auto", settings.BackendMetal: "Metal", settings.BackendCPU: "CPU"}[d.Backend])
	p.showModel(d.Model)
	p.refreshSize()
}

func (p *optionsPanel) showModel(path string) {
	if path == "" {
		p.modelLabel.SetText("none chosen")
		return
	}
	p.modelLabel.SetText(shortPath(path))
}

// sizeChosen applies the size menu.
func (p *optionsPanel) sizeChosen(v string) {
	if p.loadingDraft {
		p.refreshSize()
		return
	}
	m := p.s.model
	for i, sq := range squareLabels {
		if v == sq {
			m.SetCustomSize(squareSides[i], squareSides[i])
			p.loadingDraft = true
			p.customW.SetText(strconv.Itoa(squareSides[i]))
			p.customH.SetText(strconv.Itoa(squareSides[i]))
			p.loadingDraft = false
			p.s.draftChanged()
			return
		}
	}
	switch v {
	case sizeCustomLabel:
		m.SetSizeMode(compose.SizeCustom)
	case sizeFromImageLabel:
		m.SetSizeMode(compose.SizeFromImage)
	default:
		a, err := compose.AspectByName(v)
		if err != nil {
			return
		}
		m.SetPresetSize(a)
	}
	p.s.draftChanged()
}

func (p *optionsPanel) customChanged() {
	if p.loadingDraft {
		return
	}
	w, errW := strconv.Atoi(p.customW.Text)
	h, errH := strconv.Atoi(p.customH.Text)
	if errW != nil || errH != nil {
		return
	}
	p.s.model.SetCustomSides(w, h)
	p.s.draftChanged()
}

// refreshSize shows the size the draft will make and which inputs apply.
func (p *optionsPanel) refreshSize() {
	d := p.s.draftCopy()
	if d.Size == compose.SizeCustom && squareLabel(d.CustomW, d.CustomH) == "" || p.sizeSelect.Selected == sizeCustomLabel {
		p.customRow.Show()
	} else {
		p.customRow.Hide()
	}
	if d.Size == compose.SizePreset {
		p.scaleRadio.Enable()
	} else {
		p.scaleRadio.Disable()
	}
	w, h, err := d.OutputSize()
	switch {
	case err != nil:
		p.sizeResult.SetText(err.Error())
	case p.s.doc().Follows():
		if fw, fh, err := p.s.outputWithExtend(p.s.doc().Extend); err == nil {
			w, h = fw, fh
		}
		p.sizeResult.SetText(fmt.Sprintf("%d × %d px (the start image's)", w, h))
	case d.Size == compose.SizeCustom && (clamped(d.CustomW) || clamped(d.CustomH)):
		p.sizeResult.SetText(fmt.Sprintf("%d × %d px (clamped)", w, h))
	case d.Size == compose.SizeCustom && (w != d.CustomW || h != d.CustomH):
		p.sizeResult.SetText(fmt.Sprintf("%d × %d px (snapped to multiples of 32)", w, h))
	default:
		p.sizeResult.SetText(fmt.Sprintf("%d × %d px", w, h))
	}
	if p.form != nil {
		p.form.Refresh() // the custom-size row came or went: lay the form out again
	}
}

// showLastSeed shows the seed a run used, for copying.
func (p *optionsPanel) showLastSeed(seed uint64) {
	p.lastSeed.SetText(fmt.Sprintf("Last seed: %d", seed))
	p.copySeed.Enable()
}

// setBackend records the backend choice (persisted when there is a store).
func (s *window) setBackend(b settings.Backend) {
	s.model.SetBackend(b)
	s.deps.Settings.Backend = b
	if g, ok := s.deps.Generator.(interface{ SetBackend(settings.Backend) }); ok {
		g.SetBackend(b) // from the next job on
	}
	s.persist()
	if s.deps.BudgetFor != nil {
		s.deps.Budget = s.deps.BudgetFor(b)
		s.draftChanged()
	}
	if b == settings.BackendMetal && !hasMetal {
		s.say("Metal is only on Apple silicon Macs: on this machine jobs will fail until the backend is Auto or CPU.")
	}
}

// pickModel chooses the .cmf model file.
func (s *window) pickModel() { s.pickFile([]string{".cmf"}, "", s.useModel) }

// useModel switches to a model file: its geometry drives the memory prediction at once, and the
// generator opens it for the next job.
func (s *window) useModel(path string) {
	g, err := memplan.GeometryOf(path)
	if err != nil {
		s.say("%s cannot be used: %v", shortPath(path), err)
		return
	}
	s.model.SetModel(path)
	s.deps.Settings.Model = path
	s.deps.Geometry = g
	if mg, ok := s.deps.Generator.(interface{ SetPath(string) }); ok {
		mg.SetPath(path)
	}
	if s.deps.Calibrator != nil {
		s.deps.Calibrator.Start(path)
	}
	s.persist()
	s.options.showModel(path)
	s.say("Model set to %s; it opens at the next Generate.", shortPath(path))
	s.draftChanged()
}

// persist saves the settings when the window has a store.
func (s *window) persist() {
	if s.deps.Store == nil {
		return
	}
	if err := s.deps.Store.Save(s.deps.Settings); err != nil {
		s.say("Settings were not saved: %v", err)
	}
}

// clamped says whether a custom side lies outside the model's range (Snap clamps it).
func clamped(v int) bool { return v < compose.MinSide || v > compose.MaxSide }

// showEffective puts the side the run uses in the field the artist just left.
func (p *optionsPanel) showEffective(e *escEntry, v int) {
	if p.s.draft().Size != compose.SizeCustom || v <= 0 {
		return
	}
	if n := compose.Snap(v); n != v || e.Text != strconv.Itoa(v) {
		d := p.s.draft()
		p.s.model.SetCustomSides(compose.Snap(d.CustomW), compose.Snap(d.CustomH))
		p.loadingDraft = true
		e.SetText(strconv.Itoa(n))
		p.loadingDraft = false
		p.s.draftChanged()
	}
}

// problem shows what is wrong with a field as it is typed, or, once it is right again, takes
// its notice away (validation never goes stale).
func (p *optionsPanel) problem(field, msg string) {
	if msg != "" {
		p.problems[field] = msg
		p.s.say("%s", msg)
		return
	}
	if old, ok := p.problems[field]; ok {
		delete(p.problems, field)
		if p.s.message.Text == old {
			p.s.quiet()
		}
	}
}
