package ui

import (
	"image"
	"runtime"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/maskpaint"
)

// hasMetal is whether this build can run on the GPU.
var hasMetal = runtime.GOOS == "darwin" && runtime.GOARCH == "arm64"

// canvasView shows the live preview and then the final image, over a checkerboard, fitted to
// the area or at 100 %.
type canvasView struct {
	img     *canvas.Image
	empty   *widget.Label
	caption *widget.Label
	zoom    *widget.RadioGroup
	tools   *fyne.Container // actions on the shown image, beside the zoom (the window fills it)
	// footer holds actions under the picture (the studio fills it): there they add height, not
	// to the window's minimum width.
	footer  *fyne.Container
	holder  *fyne.Container
	fitted  fyne.CanvasObject
	actual  *container.Scroll
	current image.Image // what is shown (composited over the checkerboard)
	pixelW  int         // the image's size in image pixels (the preview's target size)
	pixelH  int
	showing bool
	box     fyne.CanvasObject
	isFinal bool
	// editor paints the start image's mask; editLayer holds it and the extend arrows over the
	// image while the start image is shown (editing), hidden otherwise.
	editor    *maskEditor
	arrows    [4]*widget.Button
	editLayer *fyne.Container
	editing   bool
	overlayOn bool
}

func newCanvasView(maskChanged func(), extend func(side int)) *canvasView {
	v := &canvasView{overlayOn: true}
	v.editor = newMaskEditor(maskChanged)
	icons := [4]fyne.Resource{theme.NavigateBackIcon(), theme.MoveUpIcon(), theme.NavigateNextIcon(), theme.MoveDownIcon()}
	for side := range v.arrows {
		v.arrows[side] = widget.NewButtonWithIcon("", icons[side], func() { extend(side) })
	}
	arrowLayer := container.NewBorder(container.NewCenter(v.arrows[sideTop]), container.NewCenter(v.arrows[sideBottom]),
		container.NewCenter(v.arrows[sideLeft]), container.NewCenter(v.arrows[sideRight]))
	v.editLayer = container.NewStack(v.editor, arrowLayer)
	v.editLayer.Hide()
	v.img = canvas.NewImageFromImage(nil)
	v.img.FillMode = canvas.ImageFillContain
	v.img.ScaleMode = canvas.ImageScaleSmooth
	v.empty = widget.NewLabelWithStyle("Your image appears here, step by step.", fyne.TextAlignCenter, fyne.TextStyle{Italic: true})
	v.caption = widget.NewLabel("")
	v.caption.Importance = widget.LowImportance
	v.caption.Truncation = fyne.TextTruncateEllipsis
	v.zoom = widget.NewRadioGroup([]string{"Fit", "100 %"}, func(string) { v.layoutZoom() })
	v.zoom.Horizontal = true
	v.zoom.Required = true
	v.zoom.SetSelected("Fit")
	v.fitted = container.NewStack(v.img, v.editLayer)
	v.actual = container.NewScroll(container.NewCenter())
	v.holder = container.NewStack(container.NewCenter(v.empty))
	v.tools = container.NewHBox()
	v.footer = container.NewHBox()
	v.box = container.NewBorder(container.NewBorder(nil, nil, nil, container.NewHBox(v.tools, v.zoom), v.caption), v.footer, nil, nil, v.holder)
	return v
}

// framePreview composites a step's preview (one pixel per latent) over the checkerboard. It
// runs off the UI goroutine.
func framePreview(img image.Image) image.Image { return overChecker(upscaleNearest(img, 4), 8) }

// frameFinal composites a decoded image over the checkerboard, off the UI goroutine.
func frameFinal(img image.Image) image.Image { return overChecker(img, 16) }

// showPreview shows a framed preview at the output's size, with note as its caption.
func (v *canvasView) showPreview(framed image.Image, w, h int, note string) {
	v.stopEditing()
	v.isFinal = false
	v.caption.SetText(note)
	v.set(framed, w, h)
}

// showFinal shows a framed decoded image of w×h pixels.
func (v *canvasView) showFinal(framed image.Image, w, h int) {
	v.stopEditing()
	v.isFinal = true
	v.caption.SetText("")
	v.set(framed, w, h)
}

func (v *canvasView) set(img image.Image, w, h int) {
	v.current, v.pixelW, v.pixelH = img, w, h
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
func (v *canvasView) layoutZoom() {
	if v.holder == nil || !v.showing {
		return
	}
	if v.zoom.Selected == "100 %" {
		v.img.FillMode = canvas.ImageFillStretch
		v.img.SetMinSize(fyne.NewSize(float32(v.pixelW), float32(v.pixelH)))
		v.actual.Content = container.NewCenter(container.NewStack(v.img, v.editLayer))
		v.actual.Refresh()
		v.holder.Objects = []fyne.CanvasObject{v.actual}
	} else {
		v.img.FillMode = canvas.ImageFillContain
		v.img.SetMinSize(fyne.NewSize(0, 0))
		v.fitted = container.NewStack(v.img, v.editLayer)
		v.holder.Objects = []fyne.CanvasObject{v.fitted}
	}
	v.holder.Refresh()
}

// startEditing shows the start image on its canvas extended by ext (framed, w×h) with the mask
// editor over it and the extend arrows on its edges.
func (v *canvasView) startEditing(framed image.Image, w, h int, m *maskpaint.Mask, ext [4]int, note string) {
	v.editor.setMask(m, ext)
	v.editing = true
	v.isFinal = false
	v.caption.SetText(note)
	v.set(framed, w, h)
	v.editor.img.Hidden = !v.overlayOn
	v.editLayer.Show()
	v.tools.Hide() // they act on saved images; the caption says what is shown instead
	v.footer.Hide()
}

// stopEditing hides the mask editor and the arrows (a preview or another image is shown).
func (v *canvasView) stopEditing() {
	if !v.editing {
		return
	}
	v.editing = false
	v.editLayer.Hide()
	v.tools.Show()
	v.footer.Show()
}

// showOverlay shows or hides the painted mask over the start image (painting goes on either way).
func (v *canvasView) showOverlay(on bool) {
	v.overlayOn = on
	v.editor.img.Hidden = !on
	v.editor.img.Refresh()
}
