package imagework

import (
	"fmt"
	"image"
	"image/draw"

	"easel/app/compose"
	"easel/app/imagework"
	"easel/engine/pipeline"

	"easel/ui/model"
)

// Defaults and ranges of the section's controls (the start image's own are the model's).
const (
	minStrength = 0.05
	// ExtendStep is the pixels an extend arrow adds to its side.
	ExtendStep   = 64
	defaultBrush = 64 // brush diameter in image pixels
)

// SetStart makes c the start image (replacing one there), with an empty mask, and shows it on
// the canvas for painting.
func (r *Region) SetStart(c compose.Condition) {
	r.m.SetStart(c)
	r.panel.refresh()
	r.ShowStart()
	r.sh.DraftChanged()
}

// RemoveStart drops the start image and its mask: back to text-to-image (⌘Z brings them back).
func (r *Region) RemoveStart() {
	if r.doc().Start == nil {
		return
	}
	r.sh.Remember("removing the start image " + r.doc().Start.Image.Name)
	r.m.RemoveStart()
	r.canvas.StopEditing()
	r.panel.refresh()
	r.sh.DraftChanged()
	r.sayKind(model.NoticeInfo, "Back to text to image: the start image and its mask were removed (%s brings them back).", undoKeyName())
}

// ShowStart puts the start image on the canvas with the mask editor over it.
func (r *Region) ShowStart() {
	doc := r.doc()
	if doc.Start == nil {
		return
	}
	img := doc.Start.Image.Image
	if e := doc.Extend; e != [4]int{} {
		// The extended canvas: the image at its place, the new area transparent (checkerboard).
		grown := image.NewNRGBA(image.Rect(0, 0, img.Rect.Dx()+e[model.SideLeft]+e[model.SideRight], img.Rect.Dy()+e[model.SideTop]+e[model.SideBottom]))
		draw.Draw(grown, img.Rect.Sub(img.Rect.Min).Add(image.Pt(e[model.SideLeft], e[model.SideTop])), img, img.Rect.Min, draw.Src)
		img = grown
	}
	r.canvas.Edit(img, doc.Start.Mask, doc.Extend,
		fmt.Sprintf("Start image · %s — paint over what to repaint; the arrows or the frame's handles extend the canvas", doc.Start.Image.Name))
	r.UpdateFrame()
	r.sh.ShowingStart()
}

// MaskChanged follows a stroke, an invert, a clear or an undo of the mask.
func (r *Region) MaskChanged() {
	r.sh.MaskEdited()
	r.panel.refreshMask()
}

// OutputSize is the size a run of draft d over the canvas document makes with the extension ext.
func OutputSize(d compose.Draft, doc model.Canvas, ext [4]int) (w, h int, err error) {
	w, h, err = d.OutputSize()
	if err != nil {
		return 0, 0, err
	}
	if doc.Start == nil || (!doc.FollowImage && ext == [4]int{}) {
		return w, h, nil
	}
	// The size follows the (extended) image, as imagework.Prepare sizes it.
	b := doc.Start.Image.Image.Rect
	w, h = imagework.SizeFollowing(b.Dx()+ext[model.SideLeft]+ext[model.SideRight], b.Dy()+ext[model.SideTop]+ext[model.SideBottom], compose.SizeMultiple)
	return w, h, nil
}

// outputWithExtend is the size the draft makes with the extension ext.
func (r *Region) outputWithExtend(ext [4]int) (w, h int, err error) {
	return OutputSize(r.m.Draft(), r.doc(), ext)
}

// ExtendSide grows one side of the canvas by ExtendStep (model.SideLeft…), refusing (and saying
// why) a size past the model's limit or the memory budget.
func (r *Region) ExtendSide(side int) {
	if r.doc().Start == nil {
		r.say("Extend needs a start image: drop one on the canvas, or use Refine this on an image.")
		return
	}
	next := r.doc().Extend
	next[side] += ExtendStep
	w, h, err := r.outputWithExtend(next)
	if err != nil {
		r.say("Cannot extend: %v", err)
		return
	}
	if w > pipeline.MaxSide || h > pipeline.MaxSide {
		r.say("Cannot extend the %s side: the image would be %d×%d, and the model makes sides of at most %d pixels.", model.SideNames[side], w, h, pipeline.MaxSide)
		return
	}
	if why := r.sizeRefusal(w, h); why != "" {
		r.say("Cannot extend the %s side to %d×%d: %s.", model.SideNames[side], w, h, why)
		return
	}
	r.m.SetExtend(next)
	r.panel.refreshExtend() // an extended canvas sets the size and the strength: the panel shows them
	r.ShowStart()
	r.sh.DraftChanged()
	r.m.Quiet()
}

// sizeRefusal says why a run at w×h would not fit the memory budget ("" when it fits).
func (r *Region) sizeRefusal(w, h int) string {
	plan, err := r.draft().Plan()
	if err != nil {
		return err.Error()
	}
	plan.Width, plan.Height = w, h
	if p := r.sh.Predict(plan); !p.Fits() {
		return "the run " + p.Explain()
	}
	return ""
}

// resetExtend takes the extension back.
func (r *Region) resetExtend() {
	r.m.SetExtend([4]int{})
	r.panel.refreshExtend()
	r.ShowStart()
	r.sh.DraftChanged()
}

// StartSizeProblem says why the model cannot make w×h from the start image (nil when it can):
// a side past its largest (following the image, a side is at least one multiple of 32).
func StartSizeProblem(w, h int) error {
	if max(w, h) > pipeline.MaxSide {
		return fmt.Errorf("following the start image makes %d×%d, and the model makes sides of at most %d pixels: choose “%s” (the size under Image)", w, h, pipeline.MaxSide, FitCoverLabel)
	}
	return nil
}

// UpdateFrame draws the generation frame on the start image: the part of the (extended) canvas
// the next run makes into its output, with the output's size (ui/model's Frame, as
// imagework.Prepare crops and sizes it); the caption says what the crop leaves out.
func (r *Region) UpdateFrame() {
	if !r.canvas.Editing() {
		return
	}
	w, h, err := r.draft().OutputSize()
	f, ok := r.doc().Frame(w, h)
	if err != nil || !ok {
		r.canvas.SetFrame(image.Rectangle{}, "", "")
		return
	}
	r.canvas.SetFrame(f.Crop, fmt.Sprintf("%d×%d", f.Width, f.Height),
		fmt.Sprintf("Start image · %s — %s. Paint over what to repaint; the arrows or the frame's handles extend the canvas.", r.doc().Start.Image.Name, f.Label()))
}
