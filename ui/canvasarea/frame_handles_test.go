package canvasarea

import (
	"fmt"
	"image"
	"image/draw"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"

	"easel/app/compose"
	"easel/ui/model"
)

// frameRig is the canvas view alone over a window model with a start image, its frame's handles
// wired to the model's actions as the window wires them: each drag's action, then the canvas
// shown again. undos counts the actions that changed the model (one undo step each).
type frameRig struct {
	v      *View
	m      *model.Window
	win    fyne.Window
	w, h   int // the draft's chosen size
	undos  int
	shown  int
	chosen func() (int, int)
}

func newFrameRig(t *testing.T, imgW, imgH int, ext [4]int, follow bool) *frameRig {
	t.Helper()
	test.NewTempApp(t)
	r := &frameRig{m: model.New(compose.Draft{}), w: 512, h: 512}
	img := image.NewNRGBA(image.Rect(0, 0, imgW, imgH))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	r.m.SetStart(compose.Condition{Name: "photo.png", Image: img})
	r.m.SetExtend(ext)
	r.m.SetFollowImage(follow)
	r.v = NewView(nil, func(int) {})
	r.v.Editor.Frame = FrameActions{
		Doc: func() (model.Canvas, int, int) { return r.m.Canvas(), r.w, r.h },
		Move: func(dx, dy int) {
			if r.m.MoveFrame(r.w, r.h, dx, dy) {
				r.undos++
			}
			r.show()
		},
		Resize: func(edges model.Edges, dx, dy int) {
			if r.m.ResizeFrame(r.w, r.h, edges, dx, dy) {
				r.undos++
			}
			r.show()
		},
	}
	r.win = test.NewTempWindow(t, r.v.Box)
	r.win.Resize(fyne.NewSize(700, 560))
	r.show()
	return r
}

// show puts the start image on its extended canvas with the frame, as the window does.
func (r *frameRig) show() {
	c := r.m.Canvas()
	cw, ch := c.Extended()
	grown := image.NewNRGBA(image.Rect(0, 0, cw, ch))
	src := c.Start.Image.Image
	draw.Draw(grown, src.Rect.Add(image.Pt(c.Extend[model.SideLeft], c.Extend[model.SideTop])), src, image.Point{}, draw.Src)
	r.v.StartEditing(FrameFinal(grown), cw, ch, c.Start.Mask, c.Extend, "start image")
	f, _ := c.Frame(r.w, r.h)
	r.v.Editor.SetFrame(f.Crop, fmt.Sprintf("%d×%d", f.Width, f.Height))
	r.shown++
}

// handle is the handle moving edges.
func (r *frameRig) handle(t *testing.T, edges model.Edges) *FrameHandle {
	t.Helper()
	for _, h := range r.v.Editor.handles {
		if h.Edges == edges {
			return h
		}
	}
	t.Fatalf("no handle for edges %b", edges)
	return nil
}

// drag drags handle h by px image pixels through the test driver, from the handle's centre.
func (r *frameRig) drag(t *testing.T, h *FrameHandle, px, py int) {
	t.Helper()
	if !h.Visible() {
		t.Fatalf("the handle %b is hidden", h.Edges)
	}
	s := r.v.Editor.scale()
	at := r.position(h).Add(fyne.NewPos(h.Size().Width/2, h.Size().Height/2))
	test.Drag(r.win.Canvas(), at, float32(px)*s, float32(py)*s)
}

// object is what the window draws for handle h; position is where it is in the window.
func (r *frameRig) object(h *FrameHandle) fyne.CanvasObject {
	for i, o := range r.v.Editor.handles {
		if o == h {
			return r.v.Editor.handleObjs[i]
		}
	}
	return nil
}

func (r *frameRig) position(h *FrameHandle) fyne.Position {
	return fyne.CurrentApp().Driver().AbsolutePositionForObject(r.object(h))
}

// Each edge's handle extends its own side, snapped to a multiple of 32 (a 200×100 image: 260
// wide snaps to 256, 150 high to 160), one action per drag; the painted mask stays empty (a
// drag on a handle does not paint).
func TestFrameHandlesExtendEachSide(t *testing.T) {
	cases := []struct {
		edges  model.Edges
		px, py int
		want   [4]int
	}{
		{model.EdgeLeft, -60, 0, [4]int{56, 0, 0, 0}},
		{model.EdgeTop, 0, -50, [4]int{0, 60, 0, 0}},
		{model.EdgeRight, 60, 0, [4]int{0, 0, 56, 0}},
		{model.EdgeBottom, 0, 50, [4]int{0, 0, 0, 60}},
		{model.EdgeRight | model.EdgeBottom, 60, 50, [4]int{0, 0, 56, 60}},
		{model.EdgeLeft | model.EdgeTop, -60, -50, [4]int{56, 60, 0, 0}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("edges %04b", tc.edges), func(t *testing.T) {
			r := newFrameRig(t, 200, 100, [4]int{}, true)
			r.drag(t, r.handle(t, tc.edges), tc.px, tc.py)
			if got := r.m.Canvas().Extend; got != tc.want || r.undos != 1 {
				t.Fatalf("extension %v after %d actions, want %v after 1", got, r.undos, tc.want)
			}
			if !r.m.Canvas().Start.Mask.Empty() {
				t.Error("dragging a handle painted the mask")
			}
			if got := r.v.Editor.Ext(); got != tc.want {
				t.Errorf("the canvas shows the extension %v, want %v", got, tc.want)
			}
		})
	}
}

// While a handle is dragged the frame shows the size the drag makes and the model is untouched;
// the drag's end is one action.
func TestFrameHandlePreviewsTheSizeWhileDragging(t *testing.T) {
	r := newFrameRig(t, 200, 100, [4]int{}, true)
	h := r.handle(t, model.EdgeRight)
	if got := r.v.Editor.frameLabel.Text; got != "192×96" {
		t.Fatalf("frame label %q before the drag", got)
	}
	s := r.v.Editor.scale()
	for range 3 { // 3 × 30 pixels
		h.Dragged(&fyne.DragEvent{Dragged: fyne.NewDelta(30*s, 0)})
	}
	if got := r.v.Editor.frameLabel.Text; got != "288×96" {
		t.Errorf("frame label %q while dragging 90 pixels right, want 288×96", got)
	}
	// Drawn over the canvas as shown (200×100): the new right edge 88 pixels past it, the left
	// where it was.
	if f := r.v.Editor.drawnFrame; f.Min.X != 0 || f.Max.X != 288 {
		t.Errorf("the frame drawn while dragging is %v, want x 0 to 288", f)
	}
	if r.m.Canvas().Extend != [4]int{} || r.undos != 0 {
		t.Fatal("the model changed before the drag ended")
	}
	r.v.Editor.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: fyne.NewPos(50, 50)}})
	if r.v.Editor.ring.Visible() {
		t.Error("the brush's ring shows while the frame is dragged")
	}
	h.DragEnd()
	if got := r.m.Canvas().Extend; got != [4]int{0, 0, 88, 0} || r.undos != 1 {
		t.Fatalf("extension %v after %d actions, want [0 0 88 0] after 1", got, r.undos)
	}
	if got := r.v.Editor.frameLabel.Text; got != "288×96" {
		t.Errorf("frame label %q after the drag", got)
	}
	h.DragEnd() // a second end without a drag does nothing
	if r.undos != 1 {
		t.Error("an end without a drag acted")
	}
}

// The label is the move grip when the frame has an extension to shift: dragging it moves the
// extension from one side to the other, the size kept; without one the grip is hidden.
func TestFrameGripMovesTheExtension(t *testing.T) {
	r := newFrameRig(t, 256, 128, [4]int{64, 0, 0, 0}, false)
	grip := r.handle(t, moveGrip)
	r.drag(t, grip, 24, 0)
	if got := r.m.Canvas().Extend; got != [4]int{40, 0, 24, 0} || r.undos != 1 {
		t.Fatalf("extension %v after %d actions, want [40 0 24 0] after 1", got, r.undos)
	}
	r.drag(t, r.handle(t, moveGrip), 100, 0) // right by at most the left's 40
	if got := r.m.Canvas().Extend; got != [4]int{0, 0, 64, 0} {
		t.Fatalf("extension %v, want [0 0 64 0]", got)
	}

	plain := newFrameRig(t, 256, 128, [4]int{}, true)
	if plain.handle(t, moveGrip).Visible() {
		t.Error("the grip shows on a frame with nothing to move")
	}
	for _, h := range plain.v.Editor.handles[:8] {
		if !h.Visible() {
			t.Errorf("the handle %04b is hidden", h.Edges)
		}
	}
}

// On a crop smaller than the image the label is the move grip too: dragging it moves the crop
// over the image (clamped at its edge), and the frame is drawn where the crop now is; a crop that
// fills the image has no grip.
func TestFrameGripMovesTheCrop(t *testing.T) {
	r := newFrameRig(t, 400, 200, [4]int{}, false) // 512×512 chosen: the crop is 200×200 at x 100
	r.drag(t, r.handle(t, moveGrip), 60, 0)
	if got := r.m.Canvas().CropOffset; got != image.Pt(60, 0) || r.undos != 1 {
		t.Fatalf("crop offset %v after %d actions, want (60,0) after 1", got, r.undos)
	}
	if f := r.v.Editor.frame; f != image.Rect(160, 0, 360, 200) {
		t.Errorf("the frame is drawn at %v, want the moved crop (160,0)-(360,200)", f)
	}
	r.drag(t, r.handle(t, moveGrip), -300, 0) // left to the image's edge
	if got := r.m.Canvas().CropOffset; got != image.Pt(-100, 0) || r.m.Canvas().Extend != [4]int{} {
		t.Fatalf("crop offset %v, extension %v; want (-100,0) and no extension", got, r.m.Canvas().Extend)
	}

	whole := newFrameRig(t, 256, 256, [4]int{}, false) // a square crop of a square image: all of it
	if whole.handle(t, moveGrip).Visible() {
		t.Error("the grip shows on a crop that fills the image")
	}
}

// From the centred crop (the size does not follow the image) an edge pulled past the image
// extends it; one moved inside it changes nothing and is no action.
func TestFrameHandleFromTheCrop(t *testing.T) {
	r := newFrameRig(t, 400, 200, [4]int{}, false) // 512×512 chosen: the crop is 200×200 at x 100
	if f := r.v.Editor.frame; f.Min.X != 100 || f.Dx() != 200 {
		t.Fatalf("frame %v", f)
	}
	r.drag(t, r.handle(t, model.EdgeLeft), -50, 0)
	if r.undos != 0 || r.m.Canvas().Extend != [4]int{} {
		t.Fatalf("a drag inside the image acted: %v", r.m.Canvas().Extend)
	}
	if f := r.v.Editor.drawnFrame; f != r.v.Editor.frame {
		t.Errorf("the frame drawn after the drag is %v, the window's %v", f, r.v.Editor.frame)
	}
	r.drag(t, r.handle(t, model.EdgeLeft), -140, 0) // x 100 → -40: 40 past → 440 → 448
	if got := r.m.Canvas().Extend; got != [4]int{48, 0, 0, 0} {
		t.Fatalf("extension %v, want [48 0 0 0]", got)
	}
	if f := r.v.Editor.frame; f.Dx() != 448 || f.Dy() != 192 {
		t.Errorf("the frame is %v: the extended canvas's 448×192", f)
	}
}

// The extend arrows sit around the picture: none overlaps a handle or the frame's label; every
// handle lies inside the editor (on a frame at the editor's edge, just inside it).
func TestFrameHandlesClearOfTheArrows(t *testing.T) {
	for _, ext := range [][4]int{{}, {64, 0, 64, 0}, {0, 256, 0, 256}} {
		r := newFrameRig(t, 256, 256, ext, true)
		d := fyne.CurrentApp().Driver()
		es := r.v.Editor.Size()
		for _, h := range r.v.Editor.handles {
			if p, s := h.Position(), h.Size(); h.Visible() && (p.X < 0 || p.Y < 0 || p.X+s.Width > es.Width || p.Y+s.Height > es.Height) {
				t.Errorf("extension %v: the handle %04b at %v %v leaves the editor of %v", ext, h.Edges, p, s, es)
			}
		}
		for side, a := range r.v.Arrows {
			ap, as := d.AbsolutePositionForObject(a), a.Size()
			for _, h := range r.v.Editor.handles {
				if !h.Visible() {
					continue
				}
				hp, hs := r.position(h), h.Size()
				if ap.X < hp.X+hs.Width && hp.X < ap.X+as.Width && ap.Y < hp.Y+hs.Height && hp.Y < ap.Y+as.Height {
					t.Errorf("extension %v: the %s arrow (%v %v) overlaps the handle %04b (%v %v)", ext, model.SideNames[side], ap, as, h.Edges, hp, hs)
				}
			}
		}
	}
}

// The keyboard reaches the edges' handles and the grip with Tab; the arrow keys move a focused
// edge along its axis by 32 pixels (one action a press) and the grip the whole frame.
func TestFrameHandlesByKeyboard(t *testing.T) {
	r := newFrameRig(t, 256, 256, [4]int{}, true)
	c := r.win.Canvas()
	var focusable []model.Edges
	for _, o := range r.v.Editor.handleObjs {
		if f, ok := o.(fyne.Focusable); ok && o.Visible() {
			focusable = append(focusable, f.(*keyFrameHandle).Edges)
		}
	}
	if len(focusable) != 4 { // the four edges; the grip is hidden (nothing to move)
		t.Fatalf("focusable handles %v, want the four edges", focusable)
	}
	right := r.object(r.handle(t, model.EdgeRight)).(fyne.Focusable)
	c.Focus(right)
	if c.Focused() != right {
		t.Fatal("the right edge's handle takes no focus")
	}
	press := func(k fyne.KeyName) { c.Focused().TypedKey(&fyne.KeyEvent{Name: k}) }
	press(fyne.KeyRight)
	press(fyne.KeyRight)
	press(fyne.KeyUp) // across the edge's axis: nothing
	if got := r.m.Canvas().Extend; got != [4]int{0, 0, 64, 0} || r.undos != 2 {
		t.Fatalf("extension %v after %d actions, want [0 0 64 0] after 2", got, r.undos)
	}
	grip := r.object(r.handle(t, moveGrip)).(fyne.Focusable)
	if !r.handle(t, moveGrip).Visible() {
		t.Fatal("the grip is hidden on an extended frame")
	}
	c.Focus(grip)
	press(fyne.KeyRight) // right would cut into the image (no extension on the left): nothing
	if got := r.m.Canvas().Extend; got != [4]int{0, 0, 64, 0} {
		t.Fatalf("moving right past the image's left edge changed the extension to %v", got)
	}
	press(fyne.KeyLeft)
	if got := r.m.Canvas().Extend; got != [4]int{32, 0, 32, 0} || r.undos != 3 {
		t.Fatalf("extension %v after %d actions, want [32 0 32 0] after 3", got, r.undos)
	}
}
