package canvasarea

import (
	"image"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"

	"easel/app/maskpaint"
	"easel/ui/model"
)

// maskOverlay is the colour painted pixels show in over the start image: a translucent red, as
// inpainting tools draw it, at this opacity for a fully marked pixel.
var maskOverlay = color.NRGBA{R: 255, G: 40, B: 80, A: 140}

// MaskEditor lies over the start image on the canvas: dragging paints (or erases) the mask with a
// round brush, a click dabs once. The mask is held at the start image's own pixel size and drawn
// as a translucent overlay fitted exactly as the image under it (both are fitted to the same box
// with the same aspect).
type MaskEditor struct {
	widget.BaseWidget
	mask    *maskpaint.Mask
	overlay *image.NRGBA
	img     *canvas.Image
	// Radius is the brush's radius in image pixels; Erase makes strokes keep instead of repaint.
	Radius float64
	Erase  bool
	// dragging is true while a stroke is under way (Begin was called).
	dragging bool
	// changed is told after each finished stroke, and after each dab.
	changed func()
	// ring outlines the brush under the pointer (hidden when the pointer is elsewhere).
	ring *canvas.Circle
	rend *maskEditorRenderer
	// ext is the canvas extension (left, top, right, bottom pixels) shown around the image: the
	// overlay covers the extended canvas, the mask sits at (left, top) in it, and the new area is
	// tinted as what will be generated.
	ext [4]int
	// frame outlines the generation frame — the part of the extended canvas the run makes into
	// its output (canvas pixels) — and frameLabel names it ("Output 832×512 · crops…").
	frame      image.Rectangle
	frameText  string
	frameBox   *canvas.Rectangle
	frameLabel *canvas.Text
	frameBack  *canvas.Rectangle
	// drawnFrame is the frame as drawn: the window's, or the one a drag of its handles makes so
	// far (frame_handles.go; frameDragged while it goes on); Frame connects the handles to the
	// window.
	drawnFrame   image.Rectangle
	frameDragged bool
	handles      [len(frameHandles)]*FrameHandle
	handleObjs   [len(frameHandles)]fyne.CanvasObject // what is drawn for each (some take the focus)
	Frame        FrameActions
}

// frameColour is the generation frame's outline and its label's background; frameColourLight
// fills its handles.
var (
	frameColour      = color.NRGBA{R: 255, G: 200, B: 40, A: 255}
	frameColourLight = color.NRGBA{R: 255, G: 250, B: 230, A: 255}
)

// extensionOverlay tints the extended canvas's new area (it is generated, not painted).
var extensionOverlay = color.NRGBA{R: 80, G: 160, B: 255, A: 90}

func NewMaskEditor(changed func()) *MaskEditor {
	e := &MaskEditor{Radius: 32, changed: changed}
	e.img = canvas.NewImageFromImage(nil)
	e.img.FillMode = canvas.ImageFillContain
	e.img.ScaleMode = canvas.ImageScaleFastest
	e.ring = canvas.NewCircle(color.Transparent)
	e.ring.StrokeColor = color.NRGBA{R: 255, G: 255, B: 255, A: 200}
	e.ring.StrokeWidth = 1.5
	e.ring.Hide()
	e.frameBox = canvas.NewRectangle(color.Transparent)
	e.frameBox.StrokeColor = frameColour
	e.frameBox.StrokeWidth = 2
	e.frameLabel = canvas.NewText("", color.Black)
	e.frameLabel.TextSize = 12
	e.frameBack = canvas.NewRectangle(frameColour)
	for i, edges := range frameHandles {
		e.handles[i], e.handleObjs[i] = newFrameHandle(e, edges)
	}
	e.ExtendBaseWidget(e)
	return e
}

// SetFrame outlines the generation frame r (extended-canvas pixels) with its label, and puts its
// handles on it; an empty r hides it.
func (e *MaskEditor) SetFrame(r image.Rectangle, label string) {
	e.frame, e.drawnFrame, e.frameText = r, r, label
	e.frameLabel.Text = label
	hidden := r.Empty()
	e.frameBox.Hidden, e.frameLabel.Hidden, e.frameBack.Hidden = hidden, hidden, hidden
	e.placeAll()
}

func (e *MaskEditor) CreateRenderer() fyne.WidgetRenderer {
	objects := []fyne.CanvasObject{e.img, e.frameBox, e.frameBack, e.frameLabel}
	objects = append(objects, e.handleObjs[:]...) // over the editor: a drag on a handle moves the frame
	r := &maskEditorRenderer{e: e, objects: append(objects, e.ring)}
	e.rend = r
	return r
}

// renderer is the editor's renderer once made (nil before the first draw).
func (e *MaskEditor) renderer() *maskEditorRenderer { return e.rend }

// maskEditorRenderer stretches the overlay over the widget and leaves the brush ring where the
// pointer put it.
type maskEditorRenderer struct {
	e       *MaskEditor
	objects []fyne.CanvasObject
}

func (r *maskEditorRenderer) Layout(size fyne.Size) {
	r.e.img.Resize(size)
	r.e.img.Move(fyne.NewPos(0, 0))
	r.placeFrame(size)
}

// placeFrame puts the generation frame's outline over its part of the fitted canvas (a frame a
// drag pulls past the canvas stops at the editor's edges), its handles on it and its label inside
// its top left corner, clear of the corner's handle.
func (r *maskEditorRenderer) placeFrame(size fyne.Size) {
	e := r.e
	scale := e.scale()
	if scale <= 0 || e.drawnFrame.Empty() {
		e.placeHandles(fyne.Position{}, fyne.Size{}, fyne.Position{}, fyne.Size{})
		return
	}
	w, h := e.canvasSize()
	ox, oy := (size.Width-float32(w)*scale)/2, (size.Height-float32(h)*scale)/2
	f := e.drawnFrame
	x0, y0 := max(ox+float32(f.Min.X)*scale, 0), max(oy+float32(f.Min.Y)*scale, 0)
	x1, y1 := min(ox+float32(f.Max.X)*scale, size.Width), min(oy+float32(f.Max.Y)*scale, size.Height)
	at, frameSize := fyne.NewPos(x0, y0), fyne.NewSize(max(x1-x0, 0), max(y1-y0, 0))
	e.frameBox.Move(at)
	e.frameBox.Resize(frameSize)
	ts := e.frameLabel.MinSize()
	pad, inset := float32(3), float32(handleSize)/2+1
	back := fyne.NewSize(max(min(ts.Width+2*pad, frameSize.Width-2*inset), 0), ts.Height+2*pad)
	e.frameBack.Move(at.AddXY(inset, inset))
	e.frameBack.Resize(back)
	e.frameLabel.Move(at.AddXY(inset+pad, inset+pad))
	e.placeHandles(at, frameSize, at.AddXY(inset, inset), back)
}
func (r *maskEditorRenderer) MinSize() fyne.Size           { return fyne.NewSize(0, 0) }
func (r *maskEditorRenderer) Refresh()                     { r.e.img.Refresh(); r.e.ring.Refresh() }
func (r *maskEditorRenderer) Objects() []fyne.CanvasObject { return r.objects }
func (r *maskEditorRenderer) Destroy()                     {}

// canvasSize is the size of what is shown: the mask with the extension around it.
func (e *MaskEditor) canvasSize() (int, int) {
	w, h := e.mask.Size()
	return w + e.ext[model.SideLeft] + e.ext[model.SideRight], h + e.ext[model.SideTop] + e.ext[model.SideBottom]
}

// scale is how many widget units one pixel takes on screen (0 without a mask).
func (e *MaskEditor) scale() float32 {
	if e.mask == nil {
		return 0
	}
	w, h := e.canvasSize()
	sz := e.Size()
	return min(sz.Width/float32(w), sz.Height/float32(h))
}

// showRing outlines the brush, at its size on screen, around p.
func (e *MaskEditor) showRing(p fyne.Position) {
	r := float32(e.Radius) * e.scale()
	if e.mask == nil || r <= 0 || e.frameDragged { // no brush while the frame is dragged
		e.ring.Hide()
		return
	}
	e.ring.Move(p.SubtractXY(r, r))
	e.ring.Resize(fyne.NewSize(2*r, 2*r))
	e.ring.Show()
	e.ring.Refresh()
}

// MouseIn, MouseMoved and MouseOut keep the brush ring under the pointer.
func (e *MaskEditor) MouseIn(ev *desktop.MouseEvent)    { e.showRing(ev.Position) }
func (e *MaskEditor) MouseMoved(ev *desktop.MouseEvent) { e.showRing(ev.Position) }
func (e *MaskEditor) MouseOut()                         { e.ring.Hide(); e.ring.Refresh() }

// setMask shows m (nil: no mask, nothing to paint on) on a canvas extended by ext.
func (e *MaskEditor) setMask(m *maskpaint.Mask, ext [4]int) {
	e.mask, e.dragging, e.ext = m, false, ext
	if m == nil {
		e.overlay = nil
		e.img.Image = nil
		e.img.Refresh()
		return
	}
	cw, ch := e.canvasSize()
	e.overlay = image.NewNRGBA(image.Rect(0, 0, cw, ch))
	inner := m.Image().Rect.Add(image.Pt(ext[model.SideLeft], ext[model.SideTop]))
	for y := range ch {
		for x := range cw {
			if !image.Pt(x, y).In(inner) {
				e.overlay.SetNRGBA(x, y, extensionOverlay)
			}
		}
	}
	e.redraw(m.Image().Rect)
}

// redraw recolours the overlay over the mask's rectangle r (mask pixels) and shows it.
func (e *MaskEditor) redraw(r image.Rectangle) {
	if e.mask == nil {
		return
	}
	g := e.mask.Image()
	r = r.Intersect(g.Rect)
	l, t := e.ext[model.SideLeft], e.ext[model.SideTop]
	for y := r.Min.Y; y < r.Max.Y; y++ {
		src := g.Pix[g.PixOffset(r.Min.X, y):]
		dst := e.overlay.Pix[e.overlay.PixOffset(r.Min.X+l, y+t):]
		for x := range r.Dx() {
			v := uint32(src[x])
			if v == 0 {
				dst[4*x+3] = 0
				continue
			}
			dst[4*x+0], dst[4*x+1], dst[4*x+2] = maskOverlay.R, maskOverlay.G, maskOverlay.B
			dst[4*x+3] = uint8((v*uint32(maskOverlay.A) + 127) / 255)
		}
	}
	e.img.Image = e.overlay
	e.img.Refresh()
}

// toMask turns a position in the widget into mask pixels: the overlay (and the image under it)
// is the extended canvas scaled to fit the widget, centred, with the mask at (left, top) in it.
func (e *MaskEditor) toMask(p fyne.Position) maskpaint.Point {
	w, h := e.canvasSize()
	sz := e.Size()
	scale := e.scale()
	if scale <= 0 {
		return maskpaint.Point{X: -1e9, Y: -1e9}
	}
	ox, oy := (sz.Width-float32(w)*scale)/2, (sz.Height-float32(h)*scale)/2
	return maskpaint.Point{X: float64((p.X-ox)/scale) - float64(e.ext[model.SideLeft]), Y: float64((p.Y-oy)/scale) - float64(e.ext[model.SideTop])}
}

// Dragged paints from where the pointer was to where it is (Fyne gives the current position
// and the move since the last event).
func (e *MaskEditor) Dragged(ev *fyne.DragEvent) {
	if e.mask == nil {
		return
	}
	if !e.dragging {
		e.mask.Begin()
		e.dragging = true
	}
	from := e.toMask(ev.Position.SubtractXY(ev.Dragged.DX, ev.Dragged.DY))
	to := e.toMask(ev.Position)
	e.showRing(ev.Position)
	e.redraw(e.mask.Stroke(from, to, e.Radius, e.Erase))
}

// DragEnd finishes the stroke: it is one undo step.
func (e *MaskEditor) DragEnd() {
	if e.mask == nil || !e.dragging {
		return
	}
	e.mask.End()
	e.dragging = false
	if e.changed != nil {
		e.changed()
	}
}

// Tapped dabs the brush once where clicked.
func (e *MaskEditor) Tapped(ev *fyne.PointEvent) {
	if e.mask == nil {
		return
	}
	p := e.toMask(ev.Position)
	e.redraw(e.mask.Stroke(p, p, e.Radius, e.Erase))
	if e.changed != nil {
		e.changed()
	}
}

// RefreshAll redraws the whole overlay (after invert, clear, undo or a restored mask).
func (e *MaskEditor) RefreshAll() {
	if e.mask != nil {
		e.redraw(e.mask.Image().Rect)
	}
}

// Mask is the mask being painted (nil when none is shown).
func (e *MaskEditor) Mask() *maskpaint.Mask { return e.mask }

// Ext is the extension shown around the image (left, top, right, bottom pixels).
func (e *MaskEditor) Ext() [4]int { return e.ext }

// OverlayShown reports whether the painted mask is drawn over the start image.
func (e *MaskEditor) OverlayShown() bool { return e.img.Visible() }
