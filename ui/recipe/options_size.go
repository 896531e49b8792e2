package recipe

import (
	"fmt"
	"path/filepath"
	"strconv"

	"easel/app/compose"
	"easel/app/settings"
)

// Size choices in the size menu besides the presets.
const (
	SizeCustomLabel    = "Custom"
	SizeFromImageLabel = "From the last condition image"
)

// squareSides are the square sizes the size menu offers besides the aspect ratios (a custom size
// underneath), and squareLabels their names there.
var (
	squareSides  = []int{512, 768, 1024}
	squareLabels = []string{"512×512", "768×768", "1024×1024"}
)

// sizeNames are the size menu's entries: the aspect ratios, the squares, Custom, From the image.
func sizeNames() []string {
	var names []string
	for _, a := range compose.Aspects {
		names = append(names, a.Name)
	}
	names = append(names, squareLabels...)
	return append(names, SizeCustomLabel, SizeFromImageLabel)
}

// squareLabel is the size menu's name for a custom w×h that is one of the squares, or "".
func squareLabel(w, h int) string {
	for i, side := range squareSides {
		if w == side && h == side {
			return squareLabels[i]
		}
	}
	return ""
}

// sizeLabel is the size menu's entry for d's size, and whether sel already says it (Custom says
// any custom size, a square only its own).
func sizeLabel(d compose.Draft, sel string) (label string, says bool) {
	switch d.Size {
	case compose.SizePreset:
		return d.Aspect.Name, sel == d.Aspect.Name
	case compose.SizeCustom:
		if sq := squareLabel(d.CustomW, d.CustomH); sq != "" {
			return sq, sel == sq || sel == SizeCustomLabel
		}
		return SizeCustomLabel, sel == SizeCustomLabel
	}
	return SizeFromImageLabel, sel == SizeFromImageLabel
}

// show puts the parts of d that changed since the widgets last showed it into them (all of them
// the first time), so a field being typed in is never overwritten by another region's change.
func (p *Options) show(d compose.Draft) {
	was := p.loading
	p.loading = true
	defer func() { p.loading = was }()
	old, all := p.shown, p.shown == nil
	if all {
		old = &compose.Draft{}
	}
	if label, says := sizeLabel(d, p.SizeSelect.Selected); all || !says {
		p.SizeSelect.SetSelected(label)
	}
	if all || d.Scale != old.Scale {
		p.ScaleRadio.SetSelected(map[compose.Scale]string{compose.Scale1K: "1K", compose.Scale2K: "2K"}[d.Scale])
	}
	showInt(p.CustomW, d.CustomW, all || d.CustomW != old.CustomW)
	showInt(p.CustomH, d.CustomH, all || d.CustomH != old.CustomH)
	showInt(p.Steps, d.Steps, all || d.Steps != old.Steps)
	showInt(p.Count, max(d.Count, 1), all || d.Count != old.Count)
	if all || d.CFG != old.CFG {
		p.CFG.SetValue(max(d.CFG, 1))
		p.cfgLabel.SetText(cfgText(d.CFG))
	}
	if all || d.RandomSeed != old.RandomSeed || d.Seed != old.Seed {
		if d.RandomSeed {
			p.SeedMode.SetSelected("Random")
			p.SeedEntry.Disable()
		} else {
			p.SeedMode.SetSelected("Fixed")
			p.SeedEntry.Enable()
			if n, err := strconv.ParseUint(p.SeedEntry.Text, 10, 64); err != nil || n != d.Seed {
				p.SeedEntry.SetText(strconv.FormatUint(d.Seed, 10))
			}
		}
	}
	if all || d.Backend != old.Backend {
		p.Backend.SetSelected(map[settings.Backend]string{settings.BackendAuto: "Auto", settings.BackendMetal: "Metal", settings.BackendCPU: "CPU"}[d.Backend])
	}
	if all || d.Model != old.Model {
		p.showModel(d.Model)
	}
	p.shown = &d
	p.RefreshSize()
}

// showInt puts v in e when it changed and e does not already say it ("0512" says 512).
func showInt(e *Entry, v int, changed bool) {
	if !changed {
		return
	}
	if n, err := strconv.Atoi(e.Text); err != nil || n != v {
		e.SetText(strconv.Itoa(v))
	}
}

func (p *Options) showModel(path string) {
	if path == "" {
		p.modelLabel.SetText("none chosen")
		return
	}
	p.modelLabel.SetText(shortPath(path))
}

// sizeChosen applies the size menu.
func (p *Options) sizeChosen(v string) {
	if p.loading {
		p.RefreshSize()
		return
	}
	for i, sq := range squareLabels {
		if v == sq {
			p.m.SetCustomSize(squareSides[i], squareSides[i])
			return
		}
	}
	switch v {
	case SizeCustomLabel:
		p.m.SetSizeMode(compose.SizeCustom)
	case SizeFromImageLabel:
		p.m.SetSizeMode(compose.SizeFromImage)
	default:
		a, err := compose.AspectByName(v)
		if err != nil {
			return
		}
		p.m.SetPresetSize(a)
	}
	p.RefreshSize() // Custom over a square size: the sides to edit show
}

func (p *Options) customChanged() {
	if p.loading {
		return
	}
	w, errW := strconv.Atoi(p.CustomW.Text)
	h, errH := strconv.Atoi(p.CustomH.Text)
	if errW != nil || errH != nil {
		return
	}
	p.m.SetCustomSides(w, h)
}

// RefreshSize shows the size the draft will make and which inputs apply.
func (p *Options) RefreshSize() {
	d := p.m.Draft()
	if d.Size == compose.SizeCustom && squareLabel(d.CustomW, d.CustomH) == "" || p.SizeSelect.Selected == SizeCustomLabel {
		p.customRow.Show()
	} else {
		p.customRow.Hide()
	}
	if d.Size == compose.SizePreset {
		p.ScaleRadio.Enable()
	} else {
		p.ScaleRadio.Disable()
	}
	w, h, err := d.OutputSize()
	fw, fh, follows := 0, 0, false
	if p.act.FollowedSize != nil {
		fw, fh, follows = p.act.FollowedSize()
	}
	switch {
	case err != nil:
		p.SizeResult.SetText(err.Error())
	case follows:
		p.SizeResult.SetText(fmt.Sprintf("%d × %d px (the start image's)", fw, fh))
	case d.Size == compose.SizeCustom && (clamped(d.CustomW) || clamped(d.CustomH)):
		p.SizeResult.SetText(fmt.Sprintf("%d × %d px (clamped)", w, h))
	case d.Size == compose.SizeCustom && (w != d.CustomW || h != d.CustomH):
		p.SizeResult.SetText(fmt.Sprintf("%d × %d px (snapped to multiples of 32)", w, h))
	default:
		p.SizeResult.SetText(fmt.Sprintf("%d × %d px", w, h))
	}
	if p.form != nil {
		p.form.Refresh() // the custom-size row came or went: lay the form out again
	}
}

// clamped says whether a custom side lies outside the model's range (Snap clamps it).
func clamped(v int) bool { return v < compose.MinSide || v > compose.MaxSide }

// showEffective puts the side the run uses in the field the artist just left.
func (p *Options) showEffective(e *Entry, v int) {
	d := p.m.Draft()
	if d.Size != compose.SizeCustom || v <= 0 {
		return
	}
	if n := compose.Snap(v); n != v || e.Text != strconv.Itoa(v) {
		p.m.SetCustomSides(compose.Snap(d.CustomW), compose.Snap(d.CustomH))
		was := p.loading
		p.loading = true
		e.SetText(strconv.Itoa(n))
		p.loading = was
	}
}

// shortPath is a file's name without its folder.
func shortPath(path string) string { return filepath.Base(path) }
