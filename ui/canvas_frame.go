package ui

import (
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
	doc, w, h := s.frameDoc()
	s.changeFrame("moving the frame", doc.Moved(w, h, dx, dy), func() { s.model.MoveFrame(w, h, dx, dy) })
}

// resizeFrame moves the frame's edges by a drag of dx, dy image pixels.
func (s *window) resizeFrame(edges model.Edges, dx, dy int) {
	doc, w, h := s.frameDoc()
	s.changeFrame("resizing the frame", doc.Resized(w, h, edges, dx, dy), func() { s.model.ResizeFrame(w, h, edges, dx, dy) })
}

// changeFrame applies a drag that makes next through the image-work region (its memory check,
// its undo step).
func (s *window) changeFrame(what string, next model.Canvas, apply func()) {
	s.work.ChangeFrame(what, next, apply)
}
