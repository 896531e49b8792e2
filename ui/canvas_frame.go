package ui

import (
	"fmt"

	"easel/ui/canvasarea"
	"easel/ui/model"
)

// frameActions connect the generation frame's handles on the canvas to the model: each drag is
// one named action (model.MoveFrame, model.ResizeFrame) and one undo step.
func (s *window) frameActions() canvasarea.FrameActions {
	return canvasarea.FrameActions{Doc: s.frameDoc, Move: s.moveFrame, Resize: s.resizeFrame}
}

// frameDoc is the canvas document and the draft's chosen output size (0×0 when the draft has
// none: the frame then follows the image or is not drawn).
func (s *window) frameDoc() (model.Canvas, int, int) {
	w, h, _ := s.draftCopy().OutputSize()
	return s.doc(), w, h
}

// moveFrame moves the frame by a drag of dx, dy image pixels.
func (s *window) moveFrame(dx, dy int) {
	s.changeFrame("moving the frame", s.doc().Moved(dx, dy), func() { s.model.MoveFrame(dx, dy) })
}

// resizeFrame moves the frame's edges by a drag of dx, dy image pixels.
func (s *window) resizeFrame(edges model.Edges, dx, dy int) {
	doc, w, h := s.frameDoc()
	s.changeFrame("resizing the frame", doc.Resized(w, h, edges, dx, dy), func() { s.model.ResizeFrame(w, h, edges, dx, dy) })
}

// changeFrame applies a drag that makes next, refusing (and saying why) a size the memory budget
// does not take, as the extend arrows do; a drag that changes nothing is no undo step.
func (s *window) changeFrame(what string, next model.Canvas, apply func()) {
	if s.doc().Start == nil || next.Extend == s.doc().Extend {
		return
	}
	w, h, err := s.outputWithExtend(next.Extend)
	if err != nil {
		s.say("Cannot change the frame: %v", err)
		return
	}
	if why := s.sizeRefusal(w, h); why != "" {
		s.say("Cannot make the frame %d×%d: %s.", w, h, why)
		return
	}
	s.remember(fmt.Sprintf("%s to %d×%d", what, w, h))
	apply()
	s.work.refreshExtend() // an extended canvas sets the size and the strength: the panel shows them
	s.showStart()
	s.draftChanged()
	s.quiet()
}
