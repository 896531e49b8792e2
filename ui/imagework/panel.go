package imagework

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
	"easel/ui/model"
)

// The Fit choices: how the start image meets the output size.
const (
	FitCoverLabel  = "Crop to the size"
	FitFollowLabel = "Size follows the image"
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

// panel is the "Work on an image" section: the start image slot with its strength and
// fit, the mask tools (the painting happens on the canvas), and the canvas extension. It folds
// away in an accordion so text-to-image keeps a short column.
type panel struct {
	r *Region

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
	loading    bool // true while refresh sets widgets, so their callbacks do not echo back
	// shown is the start image the slot shows (nil: the empty slot's hint).
	shown *model.StartImage
}

func newPanel(r *Region) *panel {
	p := &panel{r: r}
	p.thumb = canvas.NewImageFromImage(nil)
	p.thumb.FillMode = canvas.ImageFillContain
	p.thumb.SetMinSize(fyne.NewSize(56, 56))
	p.name = widget.NewLabel("")
	p.name.Truncation = fyne.TextTruncateEllipsis
	p.size = widget.NewLabel("")
	p.size.Importance = widget.LowImportance
	p.size.Truncation = fyne.TextTruncateEllipsis
	p.remove = widget.NewButtonWithIcon("", theme.DeleteIcon(), r.RemoveStart)
	choose := widget.NewButtonWithIcon("Choose…", theme.FolderOpenIcon(), r.pickStart)
	paste := widget.NewButtonWithIcon("Paste", theme.ContentPasteIcon(), func() {
		if !r.pasteStart(r.clipboard()) {
			r.say("The clipboard holds no image and no image file path.")
		}
	})
	p.show = widget.NewButtonWithIcon("Show", theme.VisibilityIcon(), r.ShowStart)
	p.slot = container.NewVBox()

	p.strengthV = widget.NewLabel("")
	p.strength = widget.NewSlider(minStrength, 1)
	p.strength.Step = 0.05
	p.strength.OnChanged = func(v float64) {
		p.strengthV.SetText(fmt.Sprintf("%.2f", v))
		if !p.loading {
			r.m.SetStrength(math.Round(v*100) / 100) // the slider's steps land beside the hundredths
		}
	}
	p.fit = widget.NewRadioGroup([]string{FitCoverLabel, FitFollowLabel}, func(v string) {
		if !p.loading {
			r.m.SetFollowImage(v == FitFollowLabel)
			r.sh.DraftChanged()
			p.refreshExtend()
		}
	})
	p.fit.Required = true

	p.tool = widget.NewRadioGroup([]string{brushLabel, eraserLabel}, func(v string) {
		r.canvas.SetErase(v == eraserLabel)
	})
	p.tool.Horizontal = true
	p.tool.Required = true
	p.brushV = widget.NewLabel("")
	p.brush = widget.NewSlider(4, 512)
	p.brush.Step = 4
	p.brush.OnChanged = func(v float64) {
		p.brushV.SetText(fmt.Sprintf("%.0f px", v))
		r.canvas.SetBrush(v)
	}
	p.featherV = widget.NewLabel("")
	p.feather = widget.NewSlider(0, 64)
	p.feather.Step = 2
	p.feather.OnChanged = func(v float64) {
		p.featherV.SetText(fmt.Sprintf("%.0f px", v))
		if !p.loading {
			r.m.SetFeather(int(v))
		}
	}
	p.growV = widget.NewLabel("")
	p.grow = widget.NewSlider(0, 64)
	p.grow.Step = 2
	p.grow.OnChanged = func(v float64) {
		p.growV.SetText(fmt.Sprintf("%.0f px", v))
		if !p.loading {
			r.m.SetGrow(int(v))
		}
	}
	p.showMask = widget.NewCheck("Show mask", func(on bool) { r.canvas.ShowMask(on) })
	invert := widget.NewButton("Invert", func() { r.maskEdit(func() { r.doc().Start.Mask.Invert() }) })
	clearB := widget.NewButton("Clear", func() { r.maskEdit(func() { r.doc().Start.Mask.Clear() }) })
	p.undo = widget.NewButtonWithIcon("Undo", theme.ContentUndoIcon(), func() { r.maskEdit(func() { r.doc().Start.Mask.Undo() }) })
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
	p.resetExt = widget.NewButton("Reset", r.resetExtend)

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

	p.loading = true
	p.strength.SetValue(model.DefaultStrength)
	p.fit.SetSelected(FitCoverLabel)
	p.tool.SetSelected(brushLabel)
	p.brush.SetValue(defaultBrush)
	p.feather.SetValue(model.DefaultFeather)
	p.grow.SetValue(0)
	p.showMask.SetChecked(true)
	p.loading = false
	p.refresh()
	return p
}

// refresh shows the start image (or the empty slot) and what depends on it.
func (p *panel) refresh() {
	st := p.r.doc().Start
	p.shown = st
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

// follow shows a change of the canvas document, whoever made it (this section, an undo, a
// restore, another region): a new start image rebuilds the slot; the values are shown again.
func (p *panel) follow() {
	if p.r.doc().Start != p.shown {
		p.refresh()
	} else {
		p.refreshMask()
	}
	p.load()
	p.refreshExtend()
}

// refreshMask shows what the mask marks and whether Undo has a step.
func (p *panel) refreshMask() {
	st := p.r.doc().Start
	if st == nil {
		return
	}
	if st.Mask.CanUndo() {
		p.undo.Enable()
	} else {
		p.undo.Disable()
	}
	var extras []string
	if x := p.r.doc().Extras; x.MaskCrop {
		extras = append(extras, fmt.Sprintf("Only the masked area is worked on (with %d px around it), as the restored image was.", x.CropPadding))
	}
	if p.r.doc().Extras.DiscardOriginal {
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
func (p *panel) refreshExtend() {
	e := p.r.doc().Extend
	w, h, err := p.r.outputWithExtend(e)
	switch {
	case err != nil:
		p.extendInfo.SetText(err.Error())
	case e == [4]int{}:
		p.extendInfo.SetText(fmt.Sprintf("%d×%d · edge arrows add %d px", w, h, ExtendStep))
	default:
		var sides []string
		for side, n := range e {
			if n > 0 {
				sides = append(sides, fmt.Sprintf("+%d %s", n, model.SideNames[side]))
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

// load shows the model's strength, fit, grow and feather (after a restore).
func (p *panel) load() {
	p.loading = true
	defer func() { p.loading = false }()
	p.strength.SetValue(p.r.doc().Strength)
	p.strengthV.SetText(fmt.Sprintf("%.2f", p.r.doc().Strength))
	p.fit.SetSelected(fitLabel(p.r.doc().FollowImage))
	p.feather.SetValue(float64(p.r.doc().Feather))
	p.featherV.SetText(fmt.Sprintf("%d px", p.r.doc().Feather))
	p.grow.SetValue(float64(p.r.doc().Grow))
	p.growV.SetText(fmt.Sprintf("%d px", p.r.doc().Grow))
	p.loading = false
	p.showRunStrength()
}

// showRunStrength shows the strength and fit the run will use: an extended canvas runs at
// strength 1 (the new area starts from noise, the mask keeps the rest) at the size of the
// extended image, so while it is extended the slider and the fit show that and are off; the
// chosen strength and fit come back when the extension is reset.
func (p *panel) showRunStrength() {
	extending := p.r.doc().Extend != [4]int{}
	p.loading = true
	defer func() { p.loading = false }()
	if extending {
		p.strength.SetValue(1)
		p.strengthV.SetText("1.00 · extending")
		p.strength.Disable()
		p.fit.SetSelected(FitFollowLabel)
		p.fit.Disable()
		return
	}
	p.strength.SetValue(p.r.doc().Strength)
	p.strengthV.SetText(fmt.Sprintf("%.2f", p.r.doc().Strength))
	p.strength.Enable()
	p.fit.SetSelected(fitLabel(p.r.doc().FollowImage)) // the chosen fit comes back too
	p.fit.Enable()
}

// fitLabel is the Fit choice that says follow.
func fitLabel(follow bool) string {
	if follow {
		return FitFollowLabel
	}
	return FitCoverLabel
}
