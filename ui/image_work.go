package ui

import (
	"fmt"
	"image"
	"image/draw"

	"easel/app/compose"
	"easel/app/imagework"
	"easel/app/maskpaint"
	"easel/app/memplan"
	"easel/engine/pipeline"
)

// Defaults and ranges of the image-work controls.
const (
	defaultStrength = 0.6 // diffusers' img2img default
	minStrength     = 0.05
	extendStep      = 64 // pixels an extend arrow adds to its side
	defaultBrush    = 64 // brush diameter in image pixels
	defaultFeather  = 8  // mask blur in pixels
)

// startImage is the picture a generation starts from, with the mask painted over it: the window's
// copy of what the draft sends (the mask keeps its undo history here).
type startImage struct {
	c    compose.Condition // the image as loaded (name, pixels, SHA-256)
	mask *maskpaint.Mask   // at the image's pixel size
}

// sides of the canvas an extend arrow grows, in the order of the extension's fields.
const (
	sideLeft = iota
	sideTop
	sideRight
	sideBottom
)

var sideNames = [4]string{"left", "top", "right", "bottom"}

// setStart makes c the start image (replacing one there), with an empty mask, and shows it on
// the canvas for painting.
func (s *window) setStart(c compose.Condition) {
	s.start = &startImage{c: c, mask: maskpaint.New(c.Image.Rect.Dx(), c.Image.Rect.Dy())}
	s.extend, s.startExtras = [4]int{}, compose.Start{}
	s.work.refresh()
	s.showStart()
	s.draftChanged()
}

// removeStart drops the start image and its mask: back to text-to-image.
func (s *window) removeStart() {
	if s.start == nil {
		return
	}
	s.remember("removing the start image " + s.start.c.Name)
	s.start = nil
	s.extend, s.startExtras = [4]int{}, compose.Start{}
	s.canvas.stopEditing()
	s.work.refresh()
	s.draftChanged()
	s.sayKind(noticeInfo, "Back to text to image: the start image and its mask were removed (%s brings them back).", undoKeyName())
}

// showStart puts the start image on the canvas with the mask editor over it.
func (s *window) showStart() {
	if s.start == nil {
		return
	}
	img := s.start.c.Image
	if s.extend != [4]int{} {
		// The extended canvas: the image at its place, the new area transparent (checkerboard).
		e := s.extend
		grown := image.NewNRGBA(image.Rect(0, 0, img.Rect.Dx()+e[sideLeft]+e[sideRight], img.Rect.Dy()+e[sideTop]+e[sideBottom]))
		draw.Draw(grown, img.Rect.Sub(img.Rect.Min).Add(image.Pt(e[sideLeft], e[sideTop])), img, img.Rect.Min, draw.Src)
		img = grown
	}
	s.canvas.startEditing(frameFinal(img), img.Rect.Dx(), img.Rect.Dy(), s.start.mask, s.extend,
		fmt.Sprintf("Start image · %s — paint over what to repaint; the arrows extend the canvas", s.start.c.Name))
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
	w, h, err = s.draft.OutputSize()
	if err != nil {
		return 0, 0, err
	}
	if s.start == nil {
		return w, h, nil
	}
	if !s.followImage && ext == [4]int{} {
		return w, h, nil
	}
	// The size follows the (extended) image, as imagework.Prepare sizes it.
	b := s.start.c.Image.Rect
	w, h = imagework.SizeFollowing(b.Dx()+ext[sideLeft]+ext[sideRight], b.Dy()+ext[sideTop]+ext[sideBottom], compose.SizeMultiple)
	return w, h, nil
}

// extendSide grows one side of the canvas by extendStep, refusing (and saying why) a size past
// the model's limit or the memory budget.
func (s *window) extendSide(side int) {
	if s.start == nil {
		s.say("Extend needs a start image: drop one on the canvas, or use Refine this on an image.")
		return
	}
	next := s.extend
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
	s.extend = next
	s.work.refreshExtend() // an extended canvas sets the size and the strength: the panel shows them
	s.showStart()
	s.draftChanged()
	s.quiet()
}

// sizeRefusal says why a run at w×h would not fit the memory budget ("" when it fits).
func (s *window) sizeRefusal(w, h int) string {
	plan, err := s.draft.Plan()
	if err != nil {
		return err.Error()
	}
	plan.Metal = hasMetal && s.draft.Backend != "cpu"
	plan.Width, plan.Height = w, h
	if p := memplan.Predict(s.deps.Geometry, plan, s.deps.Budget); !p.Fits() {
		return "the run " + p.Explain()
	}
	return ""
}

// resetExtend takes the extension back.
func (s *window) resetExtend() {
	s.extend = [4]int{}
	s.work.refreshExtend()
	s.showStart()
	s.draftChanged()
}

// startBounds is the start image's size (zero without one).
func (s *window) startBounds() image.Rectangle {
	if s.start == nil {
		return image.Rectangle{}
	}
	return s.start.c.Image.Rect
}

// startSizeProblem says why the model cannot make w×h from the start image (nil when it can):
// a side past its largest (following the image, a side is at least one multiple of 32).
func startSizeProblem(w, h int) error {
	if max(w, h) > pipeline.MaxSide {
		return fmt.Errorf("following the start image makes %d×%d, and the model makes sides of at most %d pixels: choose “%s” (the size under Image)", w, h, pipeline.MaxSide, fitCoverLabel)
	}
	return nil
}
