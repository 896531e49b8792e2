package canvasarea

import (
	"image"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/maskpaint"
	"easel/ui/model"

	"easel/ui/kit"
)

// View is the canvas: it shows the live preview and then the final image, over a checkerboard, fitted to
// the area or at 100 %.
type View struct {
	img     *canvas.Image
	empty   *widget.Label
	Caption *widget.Label
	zoom    *widget.RadioGroup
	Tools   *fyne.Container // actions on the shown image, beside the zoom (the window fills it)
	// footer holds actions under the picture (the window fills it): there they add height, not
	// to the window's minimum width.
	Footer  *fyne.Container
	holder  *fyne.Container
	fitted  fyne.CanvasObject
	actual  *container.Scroll
	Current image.Image // what is shown (composited over the checkerboard)
	PixelW  int         // the image's size in image pixels (the preview's target size)
	PixelH  int
	showing bool
	Box     fyne.CanvasObject
	IsFinal bool
	// editor paints the start image's mask and draws the generation frame with its handles;
	// editLayer holds it over the image while the start image is shown (editing), hidden
	// otherwise; the extend arrows are around the picture then.
	Editor     *MaskEditor
	Arrows     [4]*widget.Button
	arrowSlots [4]*fyne.Container // the arrows in their places around the picture
	EditLayer  *fyne.Container
	Editing    bool
	overlayOn  bool
}

// NewView makes the canvas; maskChanged is told after each stroke, extend(side) when an arrow is
// pressed. The generation frame's handles act through v.Editor.Frame (set by the window).
func NewView(maskChanged func(), extend func(side int)) *View {
	v := &View{overlayOn: true}
	v.Editor = NewMaskEditor(maskChanged)
	icons := [4]fyne.Resource{theme.NavigateBackIcon(), theme.MoveUpIcon(), theme.NavigateNextIcon(), theme.MoveDownIcon()}
	for side := range v.Arrows {
		v.Arrows[side] = widget.NewButtonWithIcon("", icons[side], func() { extend(side) })
	}
	// The arrows sit around the picture, not over it (the frame's handles are on its edges), a
	// handle's half and a little clear of it; they show only while the start image is.
	gap := float32(handleSize)/2 + 2
	pads := [4][4]float32{{0, 0, 0, gap}, {0, gap, 0, 0}, {0, 0, gap, 0}, {gap, 0, 0, 0}} // top, bottom, left, right
	for side, arrow := range v.Arrows {
		p := pads[side]
		v.arrowSlots[side] = container.NewCenter(container.New(layout.NewCustomPaddedLayout(p[0], p[1], p[2], p[3]), arrow))
		v.arrowSlots[side].Hide()
	}
	v.EditLayer = container.NewStack(v.Editor)
	v.EditLayer.Hide()
	v.img = canvas.NewImageFromImage(nil)
	v.img.FillMode = canvas.ImageFillContain
	v.img.ScaleMode = canvas.ImageScaleSmooth
	v.empty = widget.NewLabelWithStyle("Your image appears here, step by step.", fyne.TextAlignCenter, fyne.TextStyle{Italic: true})
	v.Caption = widget.NewLabel("")
	v.Caption.Importance = widget.LowImportance
	v.Caption.Truncation = fyne.TextTruncateEllipsis
	v.zoom = widget.NewRadioGroup([]string{"Fit", "100 %"}, func(string) { v.layoutZoom() })
	v.zoom.Horizontal = true
	v.zoom.Required = true
	v.zoom.SetSelected("Fit")
	v.fitted = container.NewStack(v.img, v.EditLayer)
	v.actual = container.NewScroll(container.NewCenter())
	v.holder = container.NewStack(container.NewCenter(v.empty))
	v.Tools = container.NewHBox()
	v.Footer = container.NewHBox()
	picture := container.NewBorder(v.arrowSlots[model.SideTop], v.arrowSlots[model.SideBottom], v.arrowSlots[model.SideLeft], v.arrowSlots[model.SideRight], v.holder)
	v.Box = container.NewBorder(container.NewBorder(nil, nil, nil, container.NewHBox(v.Tools, v.zoom), v.Caption), v.Footer, nil, nil, picture)
	return v
}

// FramePreview composites a step's preview (one pixel per latent) over the checkerboard. It
// runs off the UI goroutine.
func FramePreview(img image.Image) image.Image { return kit.OverChecker(kit.UpscaleNearest(img, 4), 8) }

// FrameFinal composites a decoded image over the checkerboard, off the UI goroutine.
func FrameFinal(img image.Image) image.Image { return kit.OverChecker(img, 16) }

// ShowPreview shows a framed preview at the output's size, with note as its caption.
func (v *View) ShowPreview(framed image.Image, w, h int, note string) {
	v.StopEditing()
	v.IsFinal = false
	v.Caption.SetText(note)
	v.set(framed, w, h)
}

// ShowFinal shows a framed decoded image of w×h pixels.
func (v *View) ShowFinal(framed image.Image, w, h int) {
	v.StopEditing()
	v.IsFinal = true
	v.Caption.SetText("")
	v.set(framed, w, h)
}

func (v *View) set(img image.Image, w, h int) {
	v.Current, v.PixelW, v.PixelH = img, w, h
	v.img.Image = img
	v.img.Refresh()
	if !v.showing {
		v.showing = true
		v.layoutZoom()
	}
	if v.zoom.Selected == "100 %" {
		v.layoutZoom()
	}
}

// layoutZoom puts the image in the fitted or the 100 % holder.
func (v *View) layoutZoom() {
	if v.holder == nil || !v.showing {
		return
	}
	if v.zoom.Selected == "100 %" {
		v.img.FillMode = canvas.ImageFillStretch
		v.img.SetMinSize(fyne.NewSize(float32(v.PixelW), float32(v.PixelH)))
		v.actual.Content = container.NewCenter(container.NewStack(v.img, v.EditLayer))
		v.actual.Refresh()
		v.holder.Objects = []fyne.CanvasObject{v.actual}
	} else {
		v.img.FillMode = canvas.ImageFillContain
		v.img.SetMinSize(fyne.NewSize(0, 0))
		v.fitted = container.NewStack(v.img, v.EditLayer)
		v.holder.Objects = []fyne.CanvasObject{v.fitted}
	}
	v.holder.Refresh()
}

// StartEditing shows the start image on its canvas extended by ext (framed, w×h) with the mask
// editor over it and the extend arrows on its edges.
func (v *View) StartEditing(framed image.Image, w, h int, m *maskpaint.Mask, ext [4]int, note string) {
	v.Editor.setMask(m, ext)
	v.Editing = true
	v.IsFinal = false
	v.Caption.SetText(note)
	v.set(framed, w, h)
	v.Editor.img.Hidden = !v.overlayOn
	v.EditLayer.Show()
	for _, a := range v.arrowSlots {
		a.Show()
	}
	v.Tools.Hide() // they act on saved images; the caption says what is shown instead
	v.Footer.Hide()
}

// StopEditing hides the mask editor and the arrows (a preview or another image is shown).
func (v *View) StopEditing() {
	if !v.Editing {
		return
	}
	v.Editing = false
	v.EditLayer.Hide()
	for _, a := range v.arrowSlots {
		a.Hide()
	}
	v.Tools.Show()
	v.Footer.Show()
}

// ShowOverlay shows or hides the painted mask over the start image (painting goes on either way).
func (v *View) ShowOverlay(on bool) {
	v.overlayOn = on
	v.Editor.img.Hidden = !on
	v.Editor.img.Refresh()
}
