package canvasarea

import (
	"fmt"
	"image"
	"image/color"
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"

	"easel/app/compose"
	"easel/ui/model"
)

// FrameActions connect the generation frame's handles to the window. Doc is the canvas document
// and the draft's chosen output size as they are now: a drag is previewed with the model's own
// rules (model.Canvas's Moved, Resized and Frame), the output's size on the frame as it goes.
// Move and Resize are called once, when a drag ends, with its whole move in image pixels: the
// window applies the model's action (MoveFrame, ResizeFrame) as one undo step and shows the
// canvas it makes. Without Doc the frame has no handles.
type FrameActions struct {
	Doc    func() (doc model.Canvas, w, h int)
	Move   func(dx, dy int)
	Resize func(edges model.Edges, dx, dy int)
}

// handleSize is the side of a resize handle's square (widget units); the move grip is the frame's
// label.
const handleSize = 10

// frameHandles are the handles on the frame: four corners, four edges, then the move grip.
var frameHandles = [...]model.Edges{
	model.EdgeLeft | model.EdgeTop, model.EdgeRight | model.EdgeTop, model.EdgeRight | model.EdgeBottom, model.EdgeLeft | model.EdgeBottom,
	model.EdgeLeft, model.EdgeTop, model.EdgeRight, model.EdgeBottom,
	moveGrip,
}

// moveGrip is the handle that moves the whole frame.
const moveGrip = model.EdgeLeft | model.EdgeTop | model.EdgeRight | model.EdgeBottom

// FrameHandle is one handle of the generation frame: dragging it moves its edges (a corner two,
// the grip all four: the whole frame).
type FrameHandle struct {
	widget.BaseWidget
	e     *MaskEditor
	Edges model.Edges
	dot   *canvas.Rectangle
	// moved is the drag's move so far (widget units); dragging is true between its first event
	// and its end.
	moved    fyne.Delta
	dragging bool
}

// newFrameHandle is the handle moving edges, and the object to draw for it: an edge's handle and
// the grip take the keyboard's focus (a corner's does not: its two edges do).
func newFrameHandle(e *MaskEditor, edges model.Edges) (*FrameHandle, fyne.CanvasObject) {
	h := &FrameHandle{e: e, Edges: edges, dot: canvas.NewRectangle(handleFill)}
	h.unfocused()
	var o fyne.CanvasObject = h
	if corner := edges != moveGrip && edges&(model.EdgeLeft|model.EdgeRight) != 0 && edges&(model.EdgeTop|model.EdgeBottom) != 0; corner {
		h.ExtendBaseWidget(h)
	} else {
		k := &keyFrameHandle{FrameHandle: h}
		k.ExtendBaseWidget(k)
		o = k
	}
	h.Hide()
	return h, o
}

// unfocused draws the handle at rest: a light square outlined in the frame's colour (the grip
// lies over the label: only the label shows).
func (h *FrameHandle) unfocused() {
	if h.Edges == moveGrip {
		h.dot.FillColor, h.dot.StrokeWidth = nil, 0
		return
	}
	h.dot.FillColor, h.dot.StrokeColor, h.dot.StrokeWidth = handleFill, frameColour, 2
}

// keyFrameHandle is an edge's handle or the grip, which the keyboard reaches with Tab: the arrow
// keys move the edge along its axis (the grip: the frame either way) by one size step,
// compose.SizeMultiple pixels, each press one action.
type keyFrameHandle struct{ *FrameHandle }

func (k *keyFrameHandle) FocusGained() {
	k.dot.StrokeColor, k.dot.StrokeWidth = focusColour, 3
	k.dot.Refresh()
}

func (k *keyFrameHandle) FocusLost() {
	k.unfocused()
	k.dot.Refresh()
}

func (k *keyFrameHandle) TypedRune(rune) {}

func (k *keyFrameHandle) TypedKey(ev *fyne.KeyEvent) {
	step := compose.SizeMultiple
	var dx, dy int
	switch ev.Name {
	case fyne.KeyLeft:
		dx = -step
	case fyne.KeyRight:
		dx = step
	case fyne.KeyUp:
		dy = -step
	case fyne.KeyDown:
		dy = step
	default:
		return
	}
	if k.Edges != moveGrip && k.Edges&(model.EdgeLeft|model.EdgeRight) == 0 {
		dx = 0
	}
	if k.Edges != moveGrip && k.Edges&(model.EdgeTop|model.EdgeBottom) == 0 {
		dy = 0
	}
	k.e.endFrameDrag(k.Edges, dx, dy)
}

// handleFill is a resize handle's inside; focusColour outlines the handle the keyboard moves.
var (
	handleFill  = frameColourLight
	focusColour = color.NRGBA{R: 40, G: 120, B: 255, A: 255}
)

func (h *FrameHandle) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(h.dot) }

// Cursor says what the handle does: a resize arrow along its edges, a hand on the grip.
func (h *FrameHandle) Cursor() desktop.Cursor {
	switch h.Edges {
	case moveGrip:
		return desktop.PointerCursor
	case model.EdgeLeft, model.EdgeRight:
		return desktop.HResizeCursor
	case model.EdgeTop, model.EdgeBottom:
		return desktop.VResizeCursor
	case model.EdgeLeft | model.EdgeTop, model.EdgeRight | model.EdgeBottom:
		return desktop.NWSEResizeCursor
	}
	return desktop.NESWResizeCursor
}

// MouseIn, MouseMoved and MouseOut keep the brush's ring away from a handle (it does not paint),
// and Tapped does nothing: a click on a handle paints no dab.
func (h *FrameHandle) MouseIn(*desktop.MouseEvent)    { h.e.ring.Hide(); h.e.ring.Refresh() }
func (h *FrameHandle) MouseMoved(*desktop.MouseEvent) {}
func (h *FrameHandle) MouseOut()                      {}
func (h *FrameHandle) Tapped(*fyne.PointEvent)        {}

// Dragged previews the frame the drag makes so far (Fyne gives the move since the last event).
func (h *FrameHandle) Dragged(ev *fyne.DragEvent) {
	h.moved.DX += ev.Dragged.DX
	h.moved.DY += ev.Dragged.DY
	h.dragging = true
	dx, dy := h.e.toPixels(h.moved)
	h.e.previewFrame(h.Edges, dx, dy)
}

// DragEnd hands the whole drag to the window as one action.
func (h *FrameHandle) DragEnd() {
	if !h.dragging {
		return
	}
	dx, dy := h.e.toPixels(h.moved)
	h.moved, h.dragging = fyne.Delta{}, false
	h.e.endFrameDrag(h.Edges, dx, dy)
}

// toPixels is a move on screen in image pixels.
func (e *MaskEditor) toPixels(d fyne.Delta) (int, int) {
	s := e.scale()
	if s <= 0 {
		return 0, 0
	}
	return int(math.Round(float64(d.DX / s))), int(math.Round(float64(d.DY / s)))
}

// dragged is the canvas a drag of edges by dx, dy image pixels makes, and the output size w×h
// chosen in the draft.
func (e *MaskEditor) dragged(edges model.Edges, dx, dy int) (next model.Canvas, w, h int) {
	doc, w, h := e.Frame.Doc()
	if edges == moveGrip {
		return doc.Moved(w, h, dx, dy), w, h
	}
	return doc.Resized(w, h, edges, dx, dy), w, h
}

// previewFrame draws the frame a drag makes so far, with the output's size, over the canvas as it
// is shown (the extension the drag adds is drawn past the image's shown edges).
func (e *MaskEditor) previewFrame(edges model.Edges, dx, dy int) {
	if e.Frame.Doc == nil {
		return
	}
	next, w, h := e.dragged(edges, dx, dy)
	f, ok := next.Frame(w, h)
	if !ok {
		return
	}
	shift := image.Pt(e.ext[model.SideLeft]-next.Extend[model.SideLeft], e.ext[model.SideTop]-next.Extend[model.SideTop])
	e.drawnFrame = f.Crop.Add(shift)
	e.frameLabel.Text = fmt.Sprintf("%d×%d", f.Width, f.Height)
	e.frameDragged = true
	e.ring.Hide() // a frame is being dragged, not a brush
	e.placeAll()
}

// endFrameDrag puts the frame back as the window last set it, then hands the drag to the window
// (which shows the canvas its action makes, or says why it refuses it).
func (e *MaskEditor) endFrameDrag(edges model.Edges, dx, dy int) {
	e.drawnFrame, e.frameLabel.Text, e.frameDragged = e.frame, e.frameText, false
	e.placeAll()
	if e.Frame.Doc == nil || (dx == 0 && dy == 0) {
		return
	}
	if edges == moveGrip {
		if e.Frame.Move != nil {
			e.Frame.Move(dx, dy)
		}
	} else if e.Frame.Resize != nil {
		e.Frame.Resize(edges, dx, dy)
	}
}

// placeAll lays the frame and its handles out again and redraws them.
func (e *MaskEditor) placeAll() {
	if r := e.renderer(); r != nil {
		r.placeFrame(e.Size())
	}
	for _, o := range []fyne.CanvasObject{e.frameBox, e.frameBack, e.frameLabel} {
		o.Refresh()
	}
}

// placeHandles puts the handles on the corners and edges of the frame drawn at pos, size (widget
// units) and the grip over its label (at gripPos, gripSize); they show only when the window gave
// the frame its actions, the grip only when the frame can move (an extension to shift, or a crop
// smaller than the image).
func (e *MaskEditor) placeHandles(pos fyne.Position, size fyne.Size, gripPos fyne.Position, gripSize fyne.Size) {
	shown := e.Frame.Doc != nil && !e.frame.Empty()
	movable := false
	if shown {
		doc, w, h := e.Frame.Doc()
		movable = doc.Movable(w, h)
	}
	half, area := float32(handleSize)/2, e.Size()
	xs := [3]float32{pos.X, pos.X + size.Width/2, pos.X + size.Width}
	ys := [3]float32{pos.Y, pos.Y + size.Height/2, pos.Y + size.Height}
	at := [8][2]int{{0, 0}, {2, 0}, {2, 2}, {0, 2}, {0, 1}, {1, 0}, {2, 1}, {1, 2}}
	for i, h := range e.handles {
		if i == len(e.handles)-1 {
			h.Move(gripPos)
			h.Resize(gripSize)
			showIf(h, shown && movable)
			continue
		}
		// Centred on the frame's line, but inside the editor where the frame meets its edge.
		x := min(max(xs[at[i][0]]-half, 0), max(area.Width-handleSize, 0))
		y := min(max(ys[at[i][1]]-half, 0), max(area.Height-handleSize, 0))
		h.Move(fyne.NewPos(x, y))
		h.Resize(fyne.NewSize(handleSize, handleSize))
		showIf(h, shown)
	}
}

// showIf shows or hides o (redrawn only when that changes).
func showIf(o fyne.CanvasObject, on bool) {
	switch {
	case on && !o.Visible():
		o.Show()
	case !on && o.Visible():
		o.Hide()
	}
}
