package ui

import (
	"fmt"
	"math"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/history"

	"easel/ui/kit"
)

// Choices of how the start image meets the output size.
const (
	fitCoverLabel  = "Crop to the size"
	fitFollowLabel = "Size follows the image"
)

// Choices of what a stroke does.
const (
	brushLabel  = "Brush"
	eraserLabel = "Eraser"
)

// maskTools are the section's mask controls (the painting happens on the canvas).
type maskTools struct {
	tool      *widget.RadioGroup
	brush     *widget.Slider
	brushV    *widget.Label
	feather   *widget.Slider
	featherV  *widget.Label
	grow      *widget.Slider
	growV     *widget.Label
	showMask  *widget.Check
	undo      *widget.Button
	maskState *widget.Label
}

// imageWorkPanel is the "Work on an image" section: the start image slot with its strength and
// fit, the mask tools (the painting happens on the canvas), and the canvas extension. It folds
// away in an accordion so text-to-image keeps a short column.
type imageWorkPanel struct {
	s *window

	slot       *fyne.Container // the start image's row, or the empty slot's hint
	thumb      *canvas.Image
	name       *widget.Label
	size       *widget.Label
	remove     *widget.Button
	show       *widget.Button // puts the start image back on the canvas for painting
	strength   *widget.Slider
	strengthV  *widget.Label
	fit        *widget.RadioGroup
	maskTools                // the brush, its feather and grow, and the mask's state
	extras     *widget.Label // what a restored image was made with that has no control here
	extendInfo *widget.Label
	resetExt   *widget.Button
	details    *fyne.Container // everything that needs a start image
	accordion  *widget.Accordion
	box        fyne.CanvasObject
	loading    bool // true while refresh sets widgets, so their callbacks do not echo back
}

func newImageWorkPanel(s *window) *imageWorkPanel {
	p := &imageWorkPanel{s: s}
	p.thumb = canvas.NewImageFromImage(nil)
	p.thumb.FillMode = canvas.ImageFillContain
	p.thumb.SetMinSize(fyne.NewSize(56, 56))
	p.name = widget.NewLabel("")
	p.name.Truncation = fyne.TextTruncateEllipsis
	p.size = widget.NewLabel("")
	p.size.Importance = widget.LowImportance
	p.size.Truncation = fyne.TextTruncateEllipsis
	p.remove = widget.NewButtonWithIcon("", theme.DeleteIcon(), s.removeStart)
	choose := widget.NewButtonWithIcon("Choose…", theme.FolderOpenIcon(), s.pickStart)
	paste := widget.NewButtonWithIcon("Paste", theme.ContentPasteIcon(), func() {
		if !s.pasteStart(s.clipboard()) {
			s.say("The clipboard holds no image and no image file path.")
		}
	})
	p.show = widget.NewButtonWithIcon("Show", theme.VisibilityIcon(), s.showStart)
	p.slot = container.NewVBox()

	p.strengthV = widget.NewLabel("")
	p.strength = widget.NewSlider(minStrength, 1)
	p.strength.Step = 0.05
	p.strength.OnChanged = func(v float64) {
		p.strengthV.SetText(fmt.Sprintf("%.2f", v))
		if !p.loading {
			s.model.SetStrength(math.Round(v*100) / 100) // the slider's steps land beside the hundredths
		}
	}
	p.fit = widget.NewRadioGroup([]string{fitCoverLabel, fitFollowLabel}, func(v string) {
		if !p.loading {
			s.model.SetFollowImage(v == fitFollowLabel)
			s.draftChanged()
			p.refreshExtend()
		}
	})
	p.fit.Required = true

	p.tool = widget.NewRadioGroup([]string{brushLabel, eraserLabel}, func(v string) {
		s.canvas.Editor.Erase = v == eraserLabel
	})
	p.tool.Horizontal = true
	p.tool.Required = true
	p.brushV = widget.NewLabel("")
	p.brush = widget.NewSlider(4, 512)
	p.brush.Step = 4
	p.brush.OnChanged = func(v float64) {
		p.brushV.SetText(fmt.Sprintf("%.0f px", v))
		s.canvas.Editor.Radius = v / 2
	}
	p.featherV = widget.NewLabel("")
	p.feather = widget.NewSlider(0, 64)
	p.feather.Step = 2
	p.feather.OnChanged = func(v float64) {
		p.featherV.SetText(fmt.Sprintf("%.0f px", v))
		if !p.loading {
			s.model.SetFeather(int(v))
		}
	}
	p.growV = widget.NewLabel("")
	p.grow = widget.NewSlider(0, 64)
	p.grow.Step = 2
	p.grow.OnChanged = func(v float64) {
		p.growV.SetText(fmt.Sprintf("%.0f px", v))
		if !p.loading {
			s.model.SetGrow(int(v))
		}
	}
	p.showMask = widget.NewCheck("Show mask", func(on bool) { s.canvas.ShowOverlay(on) })
	invert := widget.NewButton("Invert", func() { s.maskEdit(func() { s.doc().Start.Mask.Invert() }) })
	clearB := widget.NewButton("Clear", func() { s.maskEdit(func() { s.doc().Start.Mask.Clear() }) })
	p.undo = widget.NewButtonWithIcon("Undo", theme.ContentUndoIcon(), func() { s.maskEdit(func() { s.doc().Start.Mask.Undo() }) })
	p.maskState = widget.NewLabel("")
	p.maskState.Importance = widget.LowImportance
	// Form rows hold one line each: a wrapped label in a form is not measured again when its
	// text changes and draws over the rows under it (DESIGN §8). What does not fit is cut with
	// an ellipsis; the notice under Generate says the rest when it matters.
	p.maskState.Truncation = fyne.TextTruncateEllipsis
	p.extras = widget.NewLabel("")
	p.extras.Importance = widget.LowImportance
	p.extras.Wrapping = fyne.TextWrapWord
	p.extras.Hide()
	p.extendInfo = widget.NewLabel("")
	p.extendInfo.Truncation = fyne.TextTruncateEllipsis
	p.resetExt = widget.NewButton("Reset", s.resetExtend)

	form := widget.NewForm(
		widget.NewFormItem("Strength", container.NewBorder(nil, nil, nil, p.strengthV, p.strength)),
		widget.NewFormItem("Fit", p.fit),
		widget.NewFormItem("Mask", container.NewVBox(p.tool, p.showMask)),
		widget.NewFormItem("Brush", container.NewBorder(nil, nil, nil, p.brushV, p.brush)),
		widget.NewFormItem("Grow", container.NewBorder(nil, nil, nil, p.growV, p.grow)),
		widget.NewFormItem("Feather", container.NewBorder(nil, nil, nil, p.featherV, p.feather)),
		widget.NewFormItem("", container.NewGridWithColumns(3, invert, clearB, p.undo)),
		widget.NewFormItem("", p.maskState),
		widget.NewFormItem("Extend", container.NewBorder(nil, nil, nil, p.resetExt, p.extendInfo)),
	)
	p.details = container.NewVBox(form, p.extras)
	content := container.NewVBox(p.slot, container.NewGridWithColumns(3, choose, paste, p.show), p.details)
	p.accordion = widget.NewAccordion(widget.NewAccordionItem("Work on an image", content))
	p.box = p.accordion

	p.loading = true
	p.strength.SetValue(defaultStrength)
	p.fit.SetSelected(fitCoverLabel)
	p.tool.SetSelected(brushLabel)
	p.brush.SetValue(defaultBrush)
	p.feather.SetValue(defaultFeather)
	p.grow.SetValue(0)
	p.showMask.SetChecked(true)
	p.loading = false
	p.refresh()
	return p
}

// refresh shows the start image (or the empty slot) and what depends on it.
func (p *imageWorkPanel) refresh() {
	st := p.s.doc().Start
	if st == nil {
		hint := widget.NewLabel("Start from an image: drop it on the canvas, paste it, or use Refine this on a result. Without one, Easel makes a new image from the prompt.")
		hint.Wrapping = fyne.TextWrapWord
		hint.Importance = widget.LowImportance
		p.slot.Objects = []fyne.CanvasObject{hint}
		p.details.Hide()
		p.show.Disable()
	} else {
		p.thumb.Image = kit.OverChecker(history.Thumbnail(st.Image.Image, 96), 6)
		p.thumb.Refresh()
		p.name.SetText("Start from · " + st.Image.Name)
		b := st.Image.Image.Rect
		p.size.SetText(fmt.Sprintf("%d×%d", b.Dx(), b.Dy()))
		p.slot.Objects = []fyne.CanvasObject{container.NewBorder(nil, nil, p.thumb, container.NewCenter(p.remove), container.NewVBox(p.name, p.size))}
		p.details.Show()
		p.show.Enable()
		p.accordion.Open(0)
	}
	p.slot.Refresh()
	p.refreshMask()
	p.refreshExtend()
	// The accordion keeps its measured size until refreshed: without this it kept the start
	// image's ~585 px after the image was removed, a gap above the next section.
	p.accordion.Refresh()
}

// refreshMask shows what the mask marks and whether Undo has a step.
func (p *imageWorkPanel) refreshMask() {
	st := p.s.doc().Start
	if st == nil {
		return
	}
	if st.Mask.CanUndo() {
		p.undo.Enable()
	} else {
		p.undo.Disable()
	}
	var extras []string
	if x := p.s.doc().Extras; x.MaskCrop {
		extras = append(extras, fmt.Sprintf("Only the masked area is worked on (with %d px around it), as the restored image was.", x.CropPadding))
	}
	if p.s.doc().Extras.DiscardOriginal {
		extras = append(extras, "The result is not pasted back over the original, as in the restored image.")
	}
	p.extras.SetText(strings.Join(extras, " "))
	p.extras.Hidden = len(extras) == 0
	p.extras.Refresh()
	if n := st.Mask.Coverage(); n == 0 {
		p.maskState.SetText("No mask: the whole image is reworked")
	} else {
		p.maskState.SetText(fmt.Sprintf("The mask covers %.0f %%: only that is repainted", 100*n))
	}
}

// refreshExtend shows the extension and the size it makes.
func (p *imageWorkPanel) refreshExtend() {
	e := p.s.doc().Extend
	w, h, err := p.s.outputWithExtend(e)
	switch {
	case err != nil:
		p.extendInfo.SetText(err.Error())
	case e == [4]int{}:
		p.extendInfo.SetText(fmt.Sprintf("%d×%d · edge arrows add %d px", w, h, extendStep))
	default:
		var sides []string
		for side, n := range e {
			if n > 0 {
				sides = append(sides, fmt.Sprintf("+%d %s", n, sideNames[side]))
			}
		}
		p.extendInfo.SetText(fmt.Sprintf("%d×%d · %s", w, h, strings.Join(sides, ", ")))
	}
	p.showRunStrength()
	if e == [4]int{} {
		p.resetExt.Disable()
	} else {
		p.resetExt.Enable()
	}
}

// load shows the studio's strength, fit, grow and feather (after a restore).
func (p *imageWorkPanel) load() {
	p.loading = true
	defer func() { p.loading = false }()
	p.strength.SetValue(p.s.doc().Strength)
	p.strengthV.SetText(fmt.Sprintf("%.2f", p.s.doc().Strength))
	if p.s.doc().FollowImage {
		p.fit.SetSelected(fitFollowLabel)
	} else {
		p.fit.SetSelected(fitCoverLabel)
	}
	p.feather.SetValue(float64(p.s.doc().Feather))
	p.featherV.SetText(fmt.Sprintf("%d px", p.s.doc().Feather))
	p.grow.SetValue(float64(p.s.doc().Grow))
	p.growV.SetText(fmt.Sprintf("%d px", p.s.doc().Grow))
	p.loading = false
	p.showRunStrength()
}

// showRunStrength shows the strength and fit the run will use: an extended canvas runs at
// strength 1 (the new area starts from noise, the mask keeps the rest) at the size of the
// extended image, so while it is extended the slider and the fit show that and are off; the
// chosen strength comes back when the extension is reset.
func (p *imageWorkPanel) showRunStrength() {
	extending := p.s.doc().Extend != [4]int{}
	p.loading = true
	defer func() { p.loading = false }()
	if extending {
		p.strength.SetValue(1)
		p.strengthV.SetText("1.00 · extending")
		p.strength.Disable()
		p.fit.SetSelected(fitFollowLabel)
		p.fit.Disable()
		return
	}
	p.strength.SetValue(p.s.doc().Strength)
	p.strengthV.SetText(fmt.Sprintf("%.2f", p.s.doc().Strength))
	p.strength.Enable()
	p.fit.Enable()
}
