package imagework

import (
	"fmt"

	"easel/ui/model"
)

// ChangeFrame applies a drag of the generation frame's handles (ui/canvasarea) that makes next:
// apply is the model's action (model.ResizeFrame or MoveFrame). A size the memory budget does not
// take is refused with the reason, as the extend arrows are; a drag that changes nothing is no
// undo step; what names the undo step ("resizing the frame").
func (r *Region) ChangeFrame(what string, next model.Canvas, apply func()) {
	if r.doc().Start == nil || next.Extend == r.doc().Extend && next.CropOffset == r.doc().CropOffset {
		return
	}
	w, h, err := r.outputWithExtend(next.Extend)
	if err != nil {
		r.say("Cannot change the frame: %v", err)
		return
	}
	if why := r.sizeRefusal(w, h); why != "" {
		r.say("Cannot make the frame %d×%d: %s.", w, h, why)
		return
	}
	r.sh.Remember(fmt.Sprintf("%s to %d×%d", what, w, h))
	apply()
	r.panel.refreshExtend() // an extended canvas sets the size and the strength: the panel shows them
	r.ShowStart()
	r.sh.DraftChanged()
	r.m.Quiet()
}
