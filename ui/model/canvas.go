package model

import (
	"fmt"
	"image"

	"easel/app/compose"
	"easel/app/imagework"
	"easel/app/maskpaint"
	"easel/app/settings"
	"easel/engine/condimage"
)

// Defaults of the start image's settings.
const (
	DefaultStrength = compose.DefaultStrength // diffusers' img2img default
	DefaultFeather  = 8                       // the mask's blur in pixels
)

// The sides of the canvas, in the order of Canvas.Extend.
const (
	SideLeft = iota
	SideTop
	SideRight
	SideBottom
)

// SideNames are the sides as the window says them.
var SideNames = [4]string{"left", "top", "right", "bottom"}

// StartImage is the picture a generation starts from, with the mask painted over it (at the
// image's pixel size; the mask keeps its own undo steps).
type StartImage struct {
	Image compose.Condition
	Mask  *maskpaint.Mask
}

// Canvas is the canvas document: the start image (nil: text to image) and what goes with it.
type Canvas struct {
	Start *StartImage
	// Extend is the pixels added left, top, right and bottom.
	Extend [4]int
	// CropOffset moves the crop a chosen output size makes of the start image off its centre, in
	// the image's pixels (compose.Start.CropOffset; used while the size does not follow the image).
	CropOffset image.Point
	// Strength is how much of the start image is reworked; FollowImage makes the output size
	// follow the (extended) start image instead of cropping it to the chosen size; Feather and
	// Grow blur and dilate the mask (pixels).
	Strength    float64
	FollowImage bool
	Feather     int
	Grow        int
	// Extras keeps what a restored image was made with that the window has no control for
	// (masked-area mode, paste-back off), so making it again makes the same picture.
	Extras compose.Start
}

func emptyCanvas() Canvas { return Canvas{Strength: DefaultStrength, Feather: DefaultFeather} }

// Canvas is the canvas document as it is now (its start image and mask are shared, not copied).
func (w *Window) Canvas() Canvas { return w.canvas }

// SetStart makes c the start image (replacing one there) with an empty mask and no extension;
// the strength and mask settings stay as the artist set them.
func (w *Window) SetStart(c compose.Condition) {
	w.canvas.Start = &StartImage{Image: c, Mask: maskpaint.New(c.Image.Rect.Dx(), c.Image.Rect.Dy())}
	w.canvas.Extend, w.canvas.CropOffset, w.canvas.Extras = [4]int{}, image.Point{}, compose.Start{}
	w.changed(CanvasChanged)
}

// RemoveStart drops the start image and its mask: back to text to image.
func (w *Window) RemoveStart() {
	w.canvas.Start = nil
	w.canvas.Extend, w.canvas.CropOffset, w.canvas.Extras = [4]int{}, image.Point{}, compose.Start{}
	w.changed(CanvasChanged)
}

// ReplaceCanvas puts a whole canvas document back (undo, a restored image, a relaunch).
func (w *Window) ReplaceCanvas(c Canvas) {
	w.canvas = c
	w.changed(CanvasChanged)
}

// SetExtend sets the extension (pixels left, top, right, bottom; none is negative).
func (w *Window) SetExtend(e [4]int) {
	for i := range e {
		e[i] = max(e[i], 0)
	}
	w.canvas.Extend = e
	w.changed(CanvasChanged)
}

// SetStrength sets how much of the start image is reworked, kept in [0.05, 1].
func (w *Window) SetStrength(v float64) {
	w.canvas.Strength = min(max(v, 0.05), 1)
	w.changed(CanvasChanged)
}

// SetFollowImage chooses whether the output size follows the start image.
func (w *Window) SetFollowImage(on bool) {
	w.canvas.FollowImage = on
	w.changed(CanvasChanged)
}

// SetFeather sets the mask's blur in pixels (not below 0).
func (w *Window) SetFeather(px int) {
	w.canvas.Feather = max(px, 0)
	w.changed(CanvasChanged)
}

// SetGrow sets how far the mask is dilated in pixels (not below 0).
func (w *Window) SetGrow(px int) {
	w.canvas.Grow = max(px, 0)
	w.changed(CanvasChanged)
}

// MaskEdited tells the observers that the start image's mask was painted, inverted, cleared or
// stepped back (the mask is edited in place by the canvas's mask editor).
func (w *Window) MaskEdited() { w.changed(CanvasChanged) }

// RunStrength is the strength a run starts from the image with: the chosen one, or 1 when the
// canvas is extended (the new area starts from noise; the mask keeps the rest).
func (c Canvas) RunStrength() float64 {
	if c.Extend != [4]int{} {
		return 1
	}
	return c.Strength
}

// Extended is the size of the start image with the extension added (zero without a start image).
func (c Canvas) Extended() (w, h int) {
	if c.Start == nil {
		return 0, 0
	}
	b := c.Start.Image.Image.Rect
	return b.Dx() + c.Extend[SideLeft] + c.Extend[SideRight], b.Dy() + c.Extend[SideTop] + c.Extend[SideBottom]
}

// Follows reports whether the output size follows the start image: the artist chose so, or the
// canvas is extended.
func (c Canvas) Follows() bool { return c.Start != nil && (c.FollowImage || c.Extend != [4]int{}) }

// Frame is the generation frame on the canvas: what of the (extended) start image a run makes
// into its output, and the output's size.
type Frame struct {
	// Canvas is the extended start image's size; Crop the part of it the run uses (in its
	// pixels: the whole canvas when the size follows the image, else the cover crop, centred and
	// moved by CropOffset).
	Canvas image.Point
	Crop   image.Rectangle
	// Width and Height are the output's.
	Width, Height int
}

// Label is how the frame is named on the canvas: "Output 832×512" and what the crop leaves out.
func (f Frame) Label() string {
	s := fmt.Sprintf("Output %d×%d", f.Width, f.Height)
	if f.Crop.Dx() < f.Canvas.X || f.Crop.Dy() < f.Canvas.Y {
		s += fmt.Sprintf(" · crops the image to %d×%d", f.Crop.Dx(), f.Crop.Dy())
	}
	return s
}

// Frame is the generation frame of a run of the draft's chosen size w×h over this canvas (false
// without a start image, or without a chosen size when the size does not follow the image). It
// follows imagework.Prepare: the size follows the extended image rounded down to a multiple of
// 32, or the image is cover-cropped to w×h where imagework.CropAt places the crop.
func (c Canvas) Frame(w, h int) (Frame, bool) {
	if c.Start == nil || !c.Follows() && (w <= 0 || h <= 0) {
		return Frame{}, false
	}
	cw, ch := c.Extended()
	f := Frame{Canvas: image.Pt(cw, ch)}
	if !c.Follows() {
		f.Width, f.Height = w, h
		f.Crop, _ = imagework.CropAt(f.Canvas, w, h, c.CropOffset)
		return f, true
	}
	f.Width, f.Height = imagework.SizeFollowing(cw, ch, compose.SizeMultiple)
	// The cover crop: the largest centred rectangle of the output's aspect inside the canvas.
	cropW, cropH := cw, ch
	if f.Width*ch > f.Height*cw { // the output is wider than the canvas: full width
		cropH = max(min(ch, (cw*f.Height+f.Width/2)/f.Width), 1)
	} else {
		cropW = max(min(cw, (ch*f.Width+f.Height/2)/f.Height), 1)
	}
	x, y := (cw-cropW)/2, (ch-cropH)/2
	f.Crop = image.Rect(x, y, x+cropW, y+cropH)
	return f, true
}

// Saved is the canvas document as the draft keeps it between launches (its images are written
// by settings.DraftStore.SaveCanvas); nil without a start image.
func (c Canvas) Saved() *settings.Canvas {
	if c.Start == nil {
		return nil
	}
	return &settings.Canvas{Name: c.Start.Image.Name, SHA256: c.Start.Image.SHA256, Extend: c.Extend, Strength: c.Strength,
		Feather: c.Feather, Grow: c.Grow, FollowImage: c.FollowImage, CropOffset: [2]int{c.CropOffset.X, c.CropOffset.Y}}
}

// Resumed is the canvas document a saved one describes, over its start image and mask (mask nil:
// none painted); the image keeps the saved name.
func Resumed(s settings.Canvas, start *image.NRGBA, mask *image.Gray) (Canvas, error) {
	c := emptyCanvas()
	img := compose.Condition{Name: s.Name, Image: start, SHA256: s.SHA256}
	var err error
	if img.EncodedW, img.EncodedH, err = condimage.ConditionSize(start.Rect.Dx(), start.Rect.Dy(), compose.Resolution); err != nil {
		return c, fmt.Errorf("the last start image %s cannot be used: %w", s.Name, err)
	}
	m := maskpaint.New(start.Rect.Dx(), start.Rect.Dy())
	if mask != nil {
		m = maskpaint.From(mask)
	}
	c.Start = &StartImage{Image: img, Mask: m}
	c.Extend, c.FollowImage, c.CropOffset = s.Extend, s.FollowImage, image.Pt(s.CropOffset[0], s.CropOffset[1])
	c.Feather, c.Grow = max(s.Feather, 0), max(s.Grow, 0)
	if s.Strength > 0 {
		c.Strength = min(max(s.Strength, 0.05), 1)
	}
	return c, nil
}
