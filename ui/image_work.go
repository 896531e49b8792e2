package ui

import (
	"fmt"
	"image"
	"image/draw"

	"easel/app/compose"
	"easel/app/imagework"
	"easel/app/memplan"
	"easel/engine/pipeline"

	"easel/ui/model"

	"easel/ui/canvasarea"
)

// Defaults and ranges of the image-work controls (the start image's own are the model's).
const (
	defaultStrength = model.DefaultStrength
	minStrength     = 0.05
	extendStep      = 64 // pixels an extend arrow adds to its side
	defaultBrush    = 64 // brush diameter in image pixels
	defaultFeather  = model.DefaultFeather
)

// sides of the canvas an extend arrow grows, in the order of the extension's fields.
const (
	sideLeft   = model.SideLeft
	sideTop    = model.SideTop
	sideRight  = model.SideRight
	sideBottom = model.SideBottom
)

var sideNames = model.SideNames

// setStart makes c the start image (replacing one there), with an empty mask, and shows it on
// the canvas for painting.
func (s *window) setStart(c compose.Condition) {
	s.model.SetStart(c)
	s.work.refresh()
	s.showStart()
	s.draftChanged()
}

// removeStart drops the start image and its mask: back to text-to-image.
func (s *window) removeStart() {
	if s.doc().Start == nil {
		return
	}
	s.remember("removing the start image " + s.doc().Start.Image.Name)
	s.model.RemoveStart()
	s.canvas.StopEditing()
	s.work.refresh()
	s.draftChanged()
	s.sayKind(noticeInfo, "Back to text to image: the start image and its mask were removed (%s brings them back).", undoKeyName())
}

// showStart puts the start image on the canvas with the mask editor over it.
func (s *window) showStart() {
	if s.doc().Start == nil {
		return
	}
	if s.area != nil {
		s.area.Show(canvasarea.Canvas) // painting needs the canvas in view
	}
	img := s.doc().Start.Image.Image
	if s.doc().Extend != [4]int{} {
		// The extended canvas: the image at its place, the new area transparent (checkerboard).
		e := s.doc().Extend
		grown := image.NewNRGBA(image.Rect(0, 0, img.Rect.Dx()+e[sideLeft]+e[sideRight], img.Rect.Dy()+e[sideTop]+e[sideBottom]))
		draw.Draw(grown, img.Rect.Sub(img.Rect.Min).Add(image.Pt(e[sideLeft], e[sideTop])), img, img.Rect.Min, draw.Src)
		img = grown
	}
	s.canvas.StartEditing(canvasarea.FrameFinal(img), img.Rect.Dx(), img.Rect.Dy(), s.doc().Start.Mask, s.doc().Extend,
		fmt.Sprintf("Start image · %s — paint over what to repaint; the arrows extend the canvas", s.doc().Start.Image.Name))
	s.updateFrame()
	s.canvasJob = 0
	s.setShownFile("")
}

// maskChanged follows a stroke, an invert, a clear or an undo.
func (s *window) maskChanged() {
	s.edits++
	s.maskEdits = s.edits
	s.work.refreshMask()
}

// outputWithExtend is the size the draft makes with the extension added, and the base size
// before it.
func (s *window) outputWithExtend(ext [4]int) (w, h int, err error) {
	w, h, err = s.draftCopy().OutputSize()
	if err != nil {
		return 0, 0, err
	}
	if s.doc().Start == nil {
		return w, h, nil
	}
	if !s.doc().FollowImage && ext == [4]int{} {
		return w, h, nil
	}
	// The size follows the (extended) image, as imagework.Prepare sizes it.
	b := s.doc().Start.Image.Image.Rect
	w, h = imagework.SizeFollowing(b.Dx()+ext[sideLeft]+ext[sideRight], b.Dy()+ext[sideTop]+ext[sideBottom], compose.SizeMultiple)
	return w, h, nil
}

// extendSide grows one side of the canvas by extendStep, refusing (and saying why) a size past
// the model's limit or the memory budget.
func (s *window) extendSide(side int) {
	if s.doc().Start == nil {
		s.say("Extend needs a start image: drop one on the canvas, or use Refine this on an image.")
		return
	}
	next := s.doc().Extend
	next[side] += extendStep
	w, h, err := s.outputWithExtend(next)
	if err != nil {
		s.say("Cannot extend: %v", err)
		return
	}
	if w > pipeline.MaxSide || h > pipeline.MaxSide {
		s.say("Cannot extend the %s side: the image would be %d×%d, and the model makes sides of at most %d pixels.", sideNames[side], w, h, pipeline.MaxSide)
		return
	}
	if why := s.sizeRefusal(w, h); why != "" {
		s.say("Cannot extend the %s side to %d×%d: %s.", sideNames[side], w, h, why)
		return
	}
	s.model.SetExtend(next)
	s.work.refreshExtend() // an extended canvas sets the size and the strength: the panel shows them
	s.showStart()
	s.draftChanged()
	s.quiet()
}

// sizeRefusal says why a run at w×h would not fit the memory budget ("" when it fits).
func (s *window) sizeRefusal(w, h int) string {
	plan, err := s.draftCopy().Plan()
	if err != nil {
		return err.Error()
	}
	plan.Metal = hasMetal && s.draft().Backend != "cpu"
	plan.Width, plan.Height = w, h
	if p := memplan.Predict(s.deps.Geometry, plan, s.deps.Budget); !p.Fits() {
		return "the run " + p.Explain()
	}
	return ""
}

// resetExtend takes the extension back.
func (s *window) resetExtend() {
	s.model.SetExtend([4]int{})
	s.work.refreshExtend()
	s.showStart()
	s.draftChanged()
}

// startBounds is the start image's size (zero without one).
func (s *window) startBounds() image.Rectangle {
	if s.doc().Start == nil {
		return image.Rectangle{}
	}
	return s.doc().Start.Image.Image.Rect
}

// startSizeProblem says why the model cannot make w×h from the start image (nil when it can):
// a side past its largest (following the image, a side is at least one multiple of 32).
func startSizeProblem(w, h int) error {
	if max(w, h) > pipeline.MaxSide {
		return fmt.Errorf("following the start image makes %d×%d, and the model makes sides of at most %d pixels: choose “%s” (the size under Image)", w, h, pipeline.MaxSide, fitCoverLabel)
	}
	return nil
}

// updateFrame draws the generation frame on the start image: the part of the (extended) canvas
// the next run makes into its output, with the output's size (ui/model's Frame, as
// imagework.Prepare crops and sizes it); the caption says what the crop leaves out.
func (s *window) updateFrame() {
	if s.canvas == nil || !s.canvas.Editing {
		return
	}
	w, h, err := s.draftCopy().OutputSize()
	f, ok := s.doc().Frame(w, h)
	if err != nil || !ok {
		s.canvas.Editor.SetFrame(image.Rectangle{}, "")
		return
	}
	s.canvas.Editor.SetFrame(f.Crop, fmt.Sprintf("%d×%d", f.Width, f.Height))
	s.canvas.Caption.SetText(fmt.Sprintf("Start image · %s — %s. Paint over what to repaint; the arrows extend the canvas.", s.doc().Start.Image.Name, f.Label()))
}
