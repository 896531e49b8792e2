package ui

import (
	"strings"
	"testing"

	"easel/ui/model"
)

// A drag of the frame's handle is one named action and one undo step: the canvas shows the new
// extension, ⌘Z takes the whole drag back; a drag past the memory budget is refused with the
// reason and records nothing.
func TestFrameDragIsOneUndoStep(t *testing.T) {
	h := newHarness(t, 64e9)
	h.s.work.SetStart(mustCondition(t, h.writePNG("photo.png", 1024, 1024)))
	steps := len(h.s.undos)
	h.s.canvas.Editor.Frame.Resize(model.EdgeRight, 100, 0) // 1124 → 1120 wide
	if got := h.s.doc().Extend; got != [4]int{0, 0, 96, 0} {
		t.Fatalf("extension %v after the drag, want [0 0 96 0]", got)
	}
	if h.s.canvas.PixelW != 1120 || h.s.canvas.Editor.Ext() != h.s.doc().Extend {
		t.Errorf("the canvas shows %d wide with the extension %v", h.s.canvas.PixelW, h.s.canvas.Editor.Ext())
	}
	h.s.canvas.Editor.Frame.Move(-40, 0)
	if got := h.s.doc().Extend; got != [4]int{40, 0, 56, 0} {
		t.Fatalf("extension %v after the move, want [40 0 56 0]", got)
	}
	if len(h.s.undos) != steps+2 {
		t.Fatalf("%d undo steps after two drags, want %d", len(h.s.undos), steps+2)
	}
	h.s.undo()
	if got := h.s.doc().Extend; got != [4]int{0, 0, 96, 0} || !strings.Contains(h.s.message.Text, "moving the frame") {
		t.Fatalf("after ⌘Z: extension %v, message %q", got, h.s.message.Text)
	}
	h.s.undo()
	if got := h.s.doc().Extend; got != [4]int{} || h.s.canvas.Editor.Ext() != [4]int{} {
		t.Fatalf("after the second ⌘Z: extension %v, shown %v", got, h.s.canvas.Editor.Ext())
	}

	h.s.deps.Budget = 1e9
	h.s.canvas.Editor.Frame.Resize(model.EdgeBottom, 0, 512)
	if h.s.doc().Extend != [4]int{} || !strings.Contains(h.s.message.Text, "needs about") || len(h.s.undos) != steps {
		t.Errorf("a drag past the budget: extension %v, message %q, %d undo steps", h.s.doc().Extend, h.s.message.Text, len(h.s.undos)-steps)
	}
}
