package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"easel/app/compose"
	"easel/app/maskpaint"
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
	h.s.dropped(centreOf(h.s.canvas.box), []fyne.URI{storage.NewFileURI(bad)})
	h.pump("the bad file's message", func() bool { return strings.Contains(h.s.message.Text, "notes.png") })
	_, wantErr := compose.LoadCondition(bad)
	if h.s.start != nil || !strings.Contains(h.s.message.Text, wantErr.Error()) {
		t.Fatalf("a bad start image: start %v, message %q, want the condition images' %q", h.s.start, h.s.message.Text, wantErr)
	}

	photo := h.writePNG("photo.png", 320, 256)
	h.s.dropped(centreOf(h.s.canvas.box), []fyne.URI{storage.NewFileURI(photo)})
	h.pump("the start image", func() bool { return h.s.start != nil })
	if len(h.s.draft.Conditions) != 0 {
		t.Fatal("an image dropped on the canvas also became a condition image")
	}
	if !h.s.canvas.editing || !h.s.canvas.editLayer.Visible() {
		t.Fatal("the start image is not shown with the mask editor")
	}
	if w, hh := h.s.start.mask.Size(); w != 320 || hh != 256 {
		t.Fatalf("mask %d×%d, want the start image's 320×256", w, hh)
	}
	markup := test.RenderToMarkup(h.w.Canvas())
	for _, want := range []string{"Start from · photo.png", "320×256", "0.60"} {
		if !strings.Contains(markup, want) {
			t.Errorf("the image-work section does not show %q", want)
		}
	}

	// A drag on the window over the editor paints through the brush.
	ed := h.s.canvas.editor
	if ed.Size().Width == 0 {
		t.Fatal("the editor is not laid out over the canvas")
	}
	test.Drag(h.w.Canvas(), centreOf(ed), 40, 0)
	if h.s.start.mask.Empty() {
		t.Fatal("dragging on the canvas painted nothing")
	}
	painted := h.s.start.mask.Clone()
	if h.s.work.undo.Disabled() || !strings.Contains(h.s.work.maskState.Text, "covers") {
		t.Errorf("after painting: undo off or state %q", h.s.work.maskState.Text)
	}
	test.Tap(findButton(t, h.s.work.box, "Invert"))
	if got := h.s.start.mask.Image().Pix[0]; got != maskpaint.Repaint {
		t.Errorf("after Invert an unpainted corner is %d", got)
	}
	test.Tap(findButton(t, h.s.work.box, "Clear"))
	if !h.s.start.mask.Empty() {
		t.Error("Clear left paint")
	}
	test.Tap(h.s.work.undo)
	test.Tap(h.s.work.undo)
	sameMask(t, "two undos after invert and clear", h.s.start.mask.Image(), painted)

	h.s.work.showMask.SetChecked(false)
	if h.s.canvas.editor.img.Visible() {
		t.Error("the overlay shows with Show mask off")
	}

	test.Tap(h.s.work.remove)
	if h.s.start != nil || h.s.canvas.editing {
		t.Error("removing the start image left it, or the editor")
	}
	if !strings.Contains(h.s.message.Text, "text to image") {
		t.Errorf("message %q after removing", h.s.message.Text)
	}
}

// The extend arrows grow a side by a step and show the new size; past the model's largest side
// they refuse with the reason, and so they do past the memory budget.
func TestExtendArrows(t *testing.T) {
	h := newHarness(t, 64e9)
	h.s.options.sizeSelect.SetSelected(sizeCustomLabel)
	h.s.options.customW.SetText("1024")
	h.s.options.customH.SetText("1024")
	h.s.setStart(mustCondition(t, h.writePNG("photo.png", 128, 128)))
	test.Tap(h.s.canvas.arrows[sideRight])
	test.Tap(h.s.canvas.arrows[sideTop])
	if h.s.extend != [4]int{0, extendStep, extendStep, 0} {
		t.Fatalf("extension %v", h.s.extend)
	}
	if want := "1088×1088"; !strings.Contains(h.s.work.extendInfo.Text, want) {
		t.Errorf("extend shows %q, want the new size %s", h.s.work.extendInfo.Text, want)
	}
	h.s.options.customW.SetText("4096")
	test.Tap(h.s.canvas.arrows[sideLeft])
	if h.s.extend[sideLeft] != 0 || !strings.Contains(h.s.message.Text, "at most 4096") {
		t.Errorf("extending past 4096: extension %v, message %q", h.s.extend, h.s.message.Text)
	}
	h.s.options.customW.SetText("1024")
	h.s.deps.Budget = 1e9
	test.Tap(h.s.canvas.arrows[sideBottom])
	if h.s.extend[sideBottom] != 0 || !strings.Contains(h.s.message.Text, "needs about") {
		t.Errorf("extending past the budget: extension %v, message %q", h.s.extend, h.s.message.Text)
	}
	test.Tap(h.s.work.resetExt)
	if h.s.extend != [4]int{} {
		t.Error("Reset left the extension")
	}
}

// Refine this on a history image makes it the start image.
func TestRefineAHistoryImage(t *testing.T) {
	h := newHarness(t, 64e9)
	path := h.writePNG("result.png", 96, 64)
	h.s.setShownFile(path)
	test.Tap(h.s.actions.refine)
	h.pump("the refined image", func() bool { return h.s.start != nil })
	if h.s.start.c.Name != "result.png" || h.s.start.c.Image.Rect.Dx() != 96 {
		t.Errorf("start image %s %v", h.s.start.c.Name, h.s.start.c.Image.Rect)
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

// findButton finds the button labelled text under o.
func findButton(t *testing.T, o fyne.CanvasObject, text string) *widget.Button {
	t.Helper()
	var found *widget.Button
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch v := o.(type) {
		case *widget.Button:
			if v.Text == text {
				found = v
			}
		case *fyne.Container:
			for _, c := range v.Objects {
				walk(c)
			}
		case fyne.Widget:
			r := test.WidgetRenderer(v)
			for _, c := range r.Objects() {
				walk(c)
			}
		}
	}
	walk(o)
	if found == nil {
		t.Fatalf("no %q button", text)
	}
	return found
}
