package ui

import (
	"image"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/disintegration/imaging"

	"easel/app/compose"
	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/maskpaint"

	"easel/ui/imagework"
	"easel/ui/kit"
	"easel/ui/model"
)

// The sides and steps of the image-work region, as the tests name them.
const (
	sideLeft   = model.SideLeft
	sideTop    = model.SideTop
	sideRight  = model.SideRight
	sideBottom = model.SideBottom
	extendStep = imagework.ExtendStep
)

// centreOf is an object's centre in window coordinates.
func centreOf(o fyne.CanvasObject) fyne.Position {
	at := fyne.CurrentApp().Driver().AbsolutePositionForObject(o)
	return at.AddXY(o.Size().Width/2, o.Size().Height/2)
}

// An image dropped on the canvas becomes the start image (not a condition image) and is shown
// with the mask editor; dragging on the canvas paints; invert, clear and undo act on the mask;
// removing it returns to text to image. A bad file gets the condition images' message.
func TestStartImageDroppedOnTheCanvasAndPainted(t *testing.T) {
	h := newHarness(t, 64e9)
	bad := filepath.Join(h.dir, "notes.png")
	os.WriteFile(bad, []byte("not an image"), 0o644)
	h.s.work.Drop(centreOf(h.s.canvas.Box), []fyne.URI{storage.NewFileURI(bad)})
	h.pump("the bad file's message", func() bool { return strings.Contains(h.s.message.Text, "notes.png") })
	_, wantErr := compose.LoadCondition(bad)
	if h.s.doc().Start != nil || !strings.Contains(h.s.message.Text, wantErr.Error()) {
		t.Fatalf("a bad start image: start %v, message %q, want the condition images' %q", h.s.doc().Start, h.s.message.Text, wantErr)
	}

	photo := h.writePNG("photo.png", 320, 256)
	h.s.work.Drop(centreOf(h.s.canvas.Box), []fyne.URI{storage.NewFileURI(photo)})
	h.pump("the start image", func() bool { return h.s.doc().Start != nil })
	if len(h.s.draft().Conditions) != 0 {
		t.Fatal("an image dropped on the canvas also became a condition image")
	}
	if !h.s.canvas.Editing || !h.s.canvas.EditLayer.Visible() {
		t.Fatal("the start image is not shown with the mask editor")
	}
	if w, hh := h.s.doc().Start.Mask.Size(); w != 320 || hh != 256 {
		t.Fatalf("mask %d×%d, want the start image's 320×256", w, hh)
	}
	markup := test.RenderToMarkup(h.w.Canvas())
	for _, want := range []string{"Start from · photo.png", "320×256", "0.60"} {
		if !strings.Contains(markup, want) {
			t.Errorf("the image-work section does not show %q", want)
		}
	}

	// A drag on the window over the editor paints through the brush.
	ed := h.s.canvas.Editor
	if ed.Size().Width == 0 {
		t.Fatal("the editor is not laid out over the canvas")
	}
	test.Drag(h.w.Canvas(), centreOf(ed), 40, 0)
	if h.s.doc().Start.Mask.Empty() {
		t.Fatal("dragging on the canvas painted nothing")
	}
	painted := h.s.doc().Start.Mask.Clone()
	box := h.s.work.Box()
	if findButton(t, box, "Undo").Disabled() || labelHolding(box, "covers") == "" {
		t.Errorf("after painting: undo off or no mask state saying what it covers")
	}
	test.Tap(findButton(t, box, "Invert"))
	if got := h.s.doc().Start.Mask.Image().Pix[0]; got != maskpaint.Repaint {
		t.Errorf("after Invert an unpainted corner is %d", got)
	}
	test.Tap(findButton(t, box, "Clear"))
	if !h.s.doc().Start.Mask.Empty() {
		t.Error("Clear left paint")
	}
	test.Tap(findButton(t, box, "Undo"))
	h.s.work.UndoMask() // ⌘Z / Ctrl+Z outside text fields (the test canvas cannot dispatch shortcuts)
	sameMask(t, "two undos after invert and clear", h.s.doc().Start.Mask.Image(), painted)

	findWidget[*widget.Check](t, box, func(c *widget.Check) bool { return c.Text == "Show mask" }).SetChecked(false)
	if h.s.canvas.Editor.OverlayShown() {
		t.Error("the overlay shows with Show mask off")
	}

	test.Tap(findWidget(t, box, func(b *widget.Button) bool { // the start image's remove button
		return b.Text == "" && b.Icon != nil && b.Icon.Name() == theme.DeleteIcon().Name()
	}))
	if h.s.doc().Start != nil || h.s.canvas.Editing {
		t.Error("removing the start image left it, or the editor")
	}
	if !strings.Contains(h.s.message.Text, "text to image") {
		t.Errorf("message %q after removing", h.s.message.Text)
	}
}

// The extend arrows grow a side of the start image by a step and show the new size (the size
// follows the extended image); past the model's largest side they refuse with the reason, and
// so they do past the memory budget.
func TestExtendArrows(t *testing.T) {
	h := newHarness(t, 64e9)
	h.s.work.SetStart(mustCondition(t, h.writePNG("photo.png", 1024, 1024)))
	test.Tap(h.s.canvas.Arrows[sideRight])
	test.Tap(h.s.canvas.Arrows[sideTop])
	if h.s.doc().Extend != [4]int{0, extendStep, extendStep, 0} {
		t.Fatalf("extension %v", h.s.doc().Extend)
	}
	if fit := fitChoice(t, h.s.work.Box()); fit.Selected != imagework.FitFollowLabel {
		t.Errorf("fit shows %q on an extended canvas, whose size follows the image", fit.Selected)
	}
	if want := "1088×1088"; labelHolding(h.s.work.Box(), want) == "" {
		t.Errorf("extend does not show the new size %s", want)
	}
	if h.s.canvas.PixelW != 1088 || h.s.canvas.PixelH != 1088 || h.s.canvas.Editor.Ext() != h.s.doc().Extend {
		t.Errorf("the canvas shows %d×%d with the editor's extension %v; want the extended 1088×1088", h.s.canvas.PixelW, h.s.canvas.PixelH, h.s.canvas.Editor.Ext())
	}
	if plan, _ := h.s.memoryPlan(); plan.Width != 1088 || plan.Height != 1088 {
		w, hh := plan.Width, plan.Height
		t.Errorf("the memory prediction is for %d×%d, want the extended 1088×1088", w, hh)
	}
	h.s.deps.Budget = 1e9
	test.Tap(h.s.canvas.Arrows[sideBottom])
	if h.s.doc().Extend[sideBottom] != 0 || !strings.Contains(h.s.message.Text, "needs about") {
		t.Errorf("extending past the budget: extension %v, message %q", h.s.doc().Extend, h.s.message.Text)
	}
	h.s.deps.Budget = 64e9
	test.Tap(findButton(t, h.s.work.Box(), "Reset"))
	if h.s.doc().Extend != [4]int{} {
		t.Error("Reset left the extension")
	}

	h.s.work.SetStart(mustCondition(t, h.writePNG("wide.png", 4032, 512)))
	test.Tap(h.s.canvas.Arrows[sideLeft])
	if labelHolding(h.s.work.Box(), "4096×512") == "" {
		t.Error("extend does not show 4096×512")
	}
	test.Tap(h.s.canvas.Arrows[sideLeft])
	if h.s.doc().Extend[sideLeft] != extendStep || !strings.Contains(h.s.message.Text, "at most 4096") {
		t.Errorf("extending past 4096: extension %v, message %q", h.s.doc().Extend, h.s.message.Text)
	}
}

// Following a start image too large for the model turns Generate off with the reason; cropping
// it to the chosen size turns it on again.
func TestStartImageSizeOutsideTheModelsLimits(t *testing.T) {
	h := newHarness(t, 64e9)
	h.s.work.SetStart(mustCondition(t, h.writePNG("panorama.png", 4200, 300)))
	fitChoice(t, h.s.work.Box()).SetSelected(imagework.FitFollowLabel)
	if !h.s.generateBtn.Disabled() || !strings.Contains(h.s.blocked.Text, "4192×288") {
		t.Errorf("Generate on %v, blocked %q", !h.s.generateBtn.Disabled(), h.s.blocked.Text)
	}
	fitChoice(t, h.s.work.Box()).SetSelected(imagework.FitCoverLabel)
	if h.s.generateBtn.Disabled() {
		t.Errorf("Generate still off after choosing to crop: %q", h.s.blocked.Text)
	}
}

// Refine this on a history image makes it the start image.
func TestRefineAHistoryImage(t *testing.T) {
	h := newHarness(t, 64e9)
	path := h.writePNG("result.png", 96, 64)
	h.s.setShownFile(path)
	test.Tap(h.s.actions.Refine)
	h.pump("the refined image", func() bool { return h.s.doc().Start != nil })
	if h.s.doc().Start.Image.Name != "result.png" || h.s.doc().Start.Image.Image.Rect.Dx() != 96 {
		t.Errorf("start image %s %v", h.s.doc().Start.Image.Name, h.s.doc().Start.Image.Image.Rect)
	}
}

func mustCondition(t *testing.T, path string) compose.Condition {
	t.Helper()
	c, err := compose.LoadCondition(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// walkWidgets calls visit with o and every object under it (through containers and widgets'
// renderers), hidden or not.
func walkWidgets(o fyne.CanvasObject, visit func(fyne.CanvasObject)) {
	visit(o)
	switch v := o.(type) {
	case *fyne.Container:
		for _, c := range v.Objects {
			walkWidgets(c, visit)
		}
	case *widget.Label, *widget.Button, *widget.Check, *widget.Slider:
		// their renderers hold only their own text and shapes
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(v).Objects() {
			walkWidgets(c, visit)
		}
	}
}

// findWidget finds the last widget of type T under o that match accepts.
func findWidget[T fyne.CanvasObject](t *testing.T, o fyne.CanvasObject, match func(T) bool) T {
	t.Helper()
	var found T
	ok := false
	walkWidgets(o, func(c fyne.CanvasObject) {
		if v, is := c.(T); is && match(v) {
			found, ok = v, true
		}
	})
	if !ok {
		t.Fatalf("no %T that matches under %T", found, o)
	}
	return found
}

// findButton finds the button labelled text under o.
func findButton(t *testing.T, o fyne.CanvasObject, text string) *widget.Button {
	t.Helper()
	return findWidget(t, o, func(b *widget.Button) bool { return b.Text == text })
}

// labelHolding is the text of a label under o that contains part ("" for none).
func labelHolding(o fyne.CanvasObject, part string) string {
	var text string
	walkWidgets(o, func(c fyne.CanvasObject) {
		if l, ok := c.(*widget.Label); ok && strings.Contains(l.Text, part) {
			text = l.Text
		}
	})
	return text
}

// showsLabel reports whether a label under o reads text.
func showsLabel(o fyne.CanvasObject, text string) bool {
	found := false
	walkWidgets(o, func(c fyne.CanvasObject) {
		if l, ok := c.(*widget.Label); ok && l.Text == text {
			found = true
		}
	})
	return found
}

// fitChoice is the image-work section's Fit choice.
func fitChoice(t *testing.T, o fyne.CanvasObject) *widget.RadioGroup {
	t.Helper()
	return findWidget(t, o, func(r *widget.RadioGroup) bool { return slices.Contains(r.Options, imagework.FitFollowLabel) })
}

// A run from a painted start image sends the start image and the mask at the output size with
// the strength; its previews show the kept area as the original; the saved image keeps the
// original's pixels outside the feathered mask and takes the generated ones inside it.
func TestGenerateFromAPaintedStartImage(t *testing.T) {
	h := newHarness(t, 64e9)
	path := h.writePNG("photo.png", 256, 256)
	orig := mustCondition(t, path).Image
	h.s.work.SetStart(mustCondition(t, path))
	fitChoice(t, h.s.work.Box()).SetSelected(imagework.FitFollowLabel)
	h.s.model.SetStrength(0.75)
	h.s.model.SetFeather(0) // a hard edge: inside the stroke the generated pixels exactly
	ed := h.s.canvas.Editor
	ed.Radius = 20
	// Paint from the image's centre 60 px to the right (the test driver's drag event carries
	// the position given and the move, and the editor paints the move that ends there, as the
	// real driver reports it).
	scale := min(ed.Size().Width, ed.Size().Height) / 256
	test.Drag(h.w.Canvas(), centreOf(ed), -60*scale, 0)
	painted := h.s.doc().Start.Mask.Clone()
	if h.s.doc().Start.Mask.Empty() {
		t.Fatal("the drag painted nothing")
	}
	test.Type(h.s.prompt.Text, "a red door")
	test.Tap(h.s.generateBtn)
	req := <-h.gen.started
	if req.Init == nil || req.Init.Mask == nil || req.Init.Strength != 0.75 || req.Width != 256 || req.Height != 256 {
		t.Fatalf("request: %d×%d init %+v", req.Width, req.Height, req.Init)
	}
	sameNRGBA(t, "the request's start image", req.Init.Image, orig)
	h.gen.step <- struct{}{}
	h.pump("the first preview", func() bool { return h.s.canvas.Current != nil && !h.s.canvas.Editing })
	// The preview at a corner far from the mask shows the original (over the checkerboard: the
	// written PNG is translucent).
	frame := h.s.canvas.Current
	if fb := frame.Bounds(); fb.Dx() != 256/4 {
		t.Fatalf("preview frame %v", fb)
	}
	kept := kit.OverChecker(imaging.Resize(orig, 64, 64, imaging.Box), 8)
	if g, w := color.NRGBAModel.Convert(frame.At(2, 2)), kept.NRGBAAt(2, 2); g != w {
		t.Errorf("the preview's kept corner is %v, want the original's %v", g, w)
	}
	if g, w := color.NRGBAModel.Convert(frame.At(40, 32)), kept.NRGBAAt(40, 32); g == w {
		t.Errorf("the preview's painted area shows the original %v", g)
	}
	for range fakeSteps - 1 {
		h.gen.step <- struct{}{}
	}
	h.gen.release <- struct{}{}
	h.pump("the saved image", func() bool { return len(h.s.history.Entries) == 1 })
	saved, err := loadImage(h.s.history.Entries[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	got := saved.(*image.NRGBA)
	// The scripted generator's picture is pixel i → i mod 251; far from the stroke the
	// original's pixels stay, on the stroke's line the generated ones are there.
	for _, p := range []image.Point{{5, 5}, {250, 250}, {128, 20}} {
		if painted.GrayAt(p.X, p.Y).Y != 0 {
			t.Fatalf("test point %v is painted", p)
		}
		if g, w := got.NRGBAAt(p.X, p.Y), orig.NRGBAAt(p.X, p.Y); g != w {
			t.Errorf("kept pixel %v is %v, want the original's %v", p, g, w)
		}
	}
	i := got.PixOffset(160, 128)
	if g := got.Pix[i]; g != uint8(i%251) {
		t.Errorf("a painted pixel's red is %d, want the generated %d", g, i%251)
	}
}

func sameNRGBA(t *testing.T, what string, got, want *image.NRGBA) {
	t.Helper()
	if got.Rect.Size() != want.Rect.Size() {
		t.Fatalf("%s: %v, want %v", what, got.Rect, want.Rect)
	}
	for y := range want.Rect.Dy() {
		for x := range want.Rect.Dx() {
			if g, w := got.NRGBAAt(got.Rect.Min.X+x, got.Rect.Min.Y+y), want.NRGBAAt(want.Rect.Min.X+x, want.Rect.Min.Y+y); g != w {
				t.Fatalf("%s: pixel %d,%d is %v, want %v", what, x, y, g, w)
			}
		}
	}
}

// The image-work controls keep the window within its opening size: its minimum width stays
// under the 1400 units it opens at, with a start image and the section open.
func TestImageWorkKeepsTheWindowsMinimumSize(t *testing.T) {
	h := newHarness(t, 64e9)
	h.s.work.SetStart(mustCondition(t, h.writePNG("photo.png", 320, 256)))
	if !h.s.work.Box().(*widget.Accordion).Items[0].Open {
		t.Error("the section is not open with a start image")
	}
	if m := h.w.Content().MinSize(); m.Width > 1400 || m.Height > 860 {
		t.Errorf("the window's minimum size is %v, more than the 1400×860 it opens at", m)
	}
	h.s.work.RemoveStart()
	if m := h.w.Content().MinSize(); m.Width > 1400 || m.Height > 860 {
		t.Errorf("the window's minimum size is %v without a start image", m)
	}
}

// An image made in the masked-area mode or without paste-back (from the CLI) keeps those
// settings when restored in the window, though the window has no control for them, so making
// it again makes the same picture; a new start image drops them.
func TestRestoredStartKeepsSettingsTheWindowHasNoControlFor(t *testing.T) {
	h := newHarness(t, 64e9)
	img := mustCondition(t, h.writePNG("photo.png", 128, 96)).Image
	mask := image.NewGray(img.Rect)
	mask.Pix[5] = 255
	set := &imagefile.Settings{Prompt: "a kite", Width: 128, Height: 96, Steps: 8, CFG: 1, Seed: 3,
		Init: &imagefile.InitSettings{Image: imagefile.ImageRef{Name: "photo.png", SHA256: "ab"}, Strength: 0.5,
			Mask: &imagefile.ImageRef{Name: "mask.png"}, MaskGrow: 8, MaskBlur: 2, MaskCrop: true, CropPadding: 24, KeepOriginal: false},
		InitImage: img, MaskImage: mask}
	h.s.restore(history.Entry{Path: filepath.Join(h.dir, "made.png"), Settings: set})
	st := h.s.jobDraft().Start
	if st == nil || !st.MaskCrop || st.CropPadding != 24 || !st.DiscardOriginal || st.MaskGrow != 8 || st.Strength != 0.5 || st.Mask.Pix[5] != 255 {
		t.Fatalf("the restored start makes %+v", st)
	}
	if x := labelHolding(h.s.work.Box(), "24 px around it"); !strings.Contains(x, "not pasted back") {
		t.Errorf("the mask section says %q", x)
	}
	h.s.work.SetStart(mustCondition(t, h.writePNG("other.png", 64, 64)))
	if st := h.s.jobDraft().Start; st.MaskCrop || st.DiscardOriginal {
		t.Errorf("a new start image kept the restored image's modes: %+v", st)
	}
}

// A run from an extended canvas makes the extended size from noise in the new area: strength 1,
// the mask over the new area (fading into the old edge), and the saved image that size.
func TestGenerateFromAnExtendedCanvas(t *testing.T) {
	h := newHarness(t, 64e9)
	h.s.work.SetStart(mustCondition(t, h.writePNG("photo.png", 256, 256)))
	test.Tap(h.s.canvas.Arrows[sideRight])
	test.Tap(h.s.generateBtn)
	req := <-h.gen.started
	if req.Width != 256+extendStep || req.Height != 256 || req.Init == nil || req.Init.Strength != 1 || req.Init.Mask == nil {
		t.Fatalf("request %d×%d init %+v", req.Width, req.Height, req.Init)
	}
	if m := req.Init.Mask; m.GrayAt(300, 128).Y != 255 || m.GrayAt(10, 128).Y != 0 {
		t.Errorf("the mask does not cover the new area only: new %d, old %d", m.GrayAt(300, 128).Y, m.GrayAt(10, 128).Y)
	}
	for range fakeSteps {
		h.gen.step <- struct{}{}
	}
	h.gen.release <- struct{}{}
	h.pump("the saved image", func() bool { return len(h.s.history.Entries) == 1 })
	e := h.s.history.Entries[0]
	if e.Settings.Width != 320 || e.Settings.Init == nil || e.Settings.Init.Extend != [4]int{0, 0, extendStep, 0} {
		t.Errorf("saved %d wide, init %+v", e.Settings.Width, e.Settings.Init)
	}
}

// A queued run from a start image cancelled before it started leaves nothing behind to paste
// back with.
func TestCancelledStartRunIsForgotten(t *testing.T) {
	h := newHarness(t, 64e9)
	h.s.work.SetStart(mustCondition(t, h.writePNG("photo.png", 256, 256)))
	test.Tap(h.s.generateBtn)
	<-h.gen.started
	test.Tap(h.s.generateBtn) // queued behind the first
	h.pump("two jobs", func() bool { return len(h.s.queue.Jobs()) == 2 })
	second := h.s.queue.Jobs()[1]
	h.s.queue.Cancel(second.ID)
	h.pump("the second job cancelled", func() bool {
		return !h.s.finisher.Expected(second.Request.Init)
	})
	h.s.cancelCurrent()
	h.pump("the first job cancelled", func() bool { return h.s.queue.Pending() == 0 })
}

// sameMask fails unless got equals want pixel for pixel.
func sameMask(t *testing.T, what string, got, want *image.Gray) {
	t.Helper()
	if got.Rect != want.Rect {
		t.Fatalf("%s: mask %v, want %v", what, got.Rect, want.Rect)
	}
	for i := range got.Pix {
		if got.Pix[i] != want.Pix[i] {
			x, y := i%got.Rect.Dx(), i/got.Rect.Dx()
			t.Fatalf("%s: pixel %d,%d is %d, want %d", what, x, y, got.Pix[i], want.Pix[i])
		}
	}
}
