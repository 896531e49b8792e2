package imagework

import (
	"errors"
	"fmt"
	"image"
	"image/draw"

	"github.com/disintegration/imaging"
)

// ErrNothingToRepaint is a mask that is black everywhere.
var ErrNothingToRepaint = errors.New("the mask is black everywhere, so there is nothing to repaint: paint the area to change in white")

// Options say how to prepare an init image for a run.
type Options struct {
	// Width, Height is the output size; 0, 0: the size follows the image (or the extended
	// canvas), each side rounded down to a multiple of Multiple.
	Width, Height int
	// Multiple is the granularity of sizes the model takes (32 when 0).
	Multiple int
	// Mask is the region to repaint (white), nil for the whole image. A mask of another size than
	// the image is scaled to it, with a notice.
	Mask *image.Gray
	// MaskGrow dilates the mask by this many pixels, then MaskBlur feathers it with a Gaussian
	// of this standard deviation in pixels.
	MaskGrow int
	MaskBlur float64
	// CropMasked works on the masked area only: the mask's bounds grown by CropPadding pixels,
	// scaled to about WorkArea pixels (Width×Height when given), then pasted back.
	CropMasked  bool
	CropPadding int
	WorkArea    int
	// KeepOriginal pastes the result back through the feathered mask, so the saved image keeps
	// the original's pixels exactly where the mask is black.
	KeepOriginal bool
	// Extend grows the canvas; the new area is added to the mask (see Extend), fading into the
	// old image over ExtendFeather pixels (DefaultExtendFeather when 0).
	Extend        Margins
	ExtendFeather int
	// CropOffset moves the crop that fits the (extended) image to Width×Height off its centre, in
	// the image's pixels (FitAt; clamped so the crop stays inside; zero: centred). The masked-area
	// mode places its own crop and ignores it.
	CropOffset image.Point
}

// Prepared is an init image ready for the pipeline, and what Finish needs to make the picture
// to save from the pipeline's result.
type Prepared struct {
	// Init and Mask (nil: the whole image) are what the pipeline takes, at Width×Height.
	Init          *image.NRGBA
	Mask          *image.Gray
	Width, Height int
	// Canvas is the picture the result goes into (the saved image's size): the fitted or
	// extended init image; PasteMask is the feathered mask at its size (nil: none).
	Canvas    *image.NRGBA
	PasteMask *image.Gray
	// Region is where the work goes in Canvas in the masked-area mode (else Canvas's bounds).
	Region image.Rectangle
	// Notices are sentences for the user about what was adjusted (a mask scaled to the image).
	Notices []string

	cropped bool
	keep    bool
}

// Prepare fits, extends, masks and crops an init image as o says.
func Prepare(init *image.NRGBA, o Options) (*Prepared, error) {
	if init == nil || init.Bounds().Empty() {
		return nil, errors.New("no image to start from")
	}
	multiple := o.Multiple
	if multiple <= 0 {
		multiple = 32
	}
	if (o.Width == 0) != (o.Height == 0) || o.Width < 0 || o.Height < 0 {
		return nil, fmt.Errorf("output size %d×%d: give both a width and a height, or neither", o.Width, o.Height)
	}
	if o.MaskGrow < 0 || o.MaskBlur < 0 || o.CropPadding < 0 {
		return nil, fmt.Errorf("mask grow %d, blur %g and crop padding %d must not be negative", o.MaskGrow, o.MaskBlur, o.CropPadding)
	}
	p := &Prepared{keep: o.KeepOriginal}
	canvas := imaging.Clone(init)
	ib := canvas.Bounds()
	mask := o.Mask
	if mask != nil {
		if mb := mask.Bounds(); mb.Dx() != ib.Dx() || mb.Dy() != ib.Dy() {
			p.Notices = append(p.Notices, fmt.Sprintf("The mask is %d×%d but the image %d×%d: scaled the mask to the image.", mb.Dx(), mb.Dy(), ib.Dx(), ib.Dy()))
			mask = ScaleMask(mask, ib.Dx(), ib.Dy())
		}
		if Empty(mask) {
			return nil, ErrNothingToRepaint
		}
	}
	if !o.Extend.IsZero() {
		feather := o.ExtendFeather
		if feather <= 0 {
			feather = DefaultExtendFeather
		}
		var ext *image.Gray
		canvas, ext = Extend(canvas, o.Extend, feather)
		if mask != nil {
			padded := image.NewGray(ext.Rect)
			draw.Draw(padded, mask.Bounds().Add(image.Pt(o.Extend.Left, o.Extend.Top)), mask, mask.Bounds().Min, draw.Src)
			for i, v := range padded.Pix {
				ext.Pix[i] = max(ext.Pix[i], v)
			}
		}
		mask = ext
	}
	if mask != nil {
		mask = Feather(Grow(mask, o.MaskGrow), o.MaskBlur)
	}

	if o.CropMasked {
		if mask == nil {
			return nil, errors.New("working on the masked area only needs a mask")
		}
		return p.crop(canvas, mask, o, multiple)
	}
	w, h := o.Width, o.Height
	if w == 0 {
		w, h = SizeFollowing(canvas.Bounds().Dx(), canvas.Bounds().Dy(), multiple)
	}
	p.Canvas, p.Width, p.Height = FitAt(canvas, w, h, o.CropOffset), w, h
	p.Init, p.Region = p.Canvas, p.Canvas.Bounds()
	if mask != nil {
		p.Mask = FitMaskAt(mask, w, h, o.CropOffset)
		if Empty(p.Mask) {
			return nil, fmt.Errorf("fitting the image to %d×%d cut away the whole mask: %w", w, h, ErrNothingToRepaint)
		}
		p.PasteMask = p.Mask
	}
	return p, nil
}

// crop is Prepare's masked-area mode: the canvas keeps its size, the model works on the region.
func (p *Prepared) crop(canvas *image.NRGBA, mask *image.Gray, o Options, multiple int) (*Prepared, error) {
	bounds := MaskBounds(mask)
	aspect := float64(bounds.Dx()+2*o.CropPadding) / float64(bounds.Dy()+2*o.CropPadding)
	if o.Width > 0 {
		aspect = float64(o.Width) / float64(o.Height)
	}
	p.Region = CropRegion(mask, o.CropPadding, aspect)
	p.Width, p.Height = o.Width, o.Height
	if p.Width == 0 {
		area := o.WorkArea
		if area <= 0 {
			area = 1024 * 1024
		}
		p.Width, p.Height = WorkSize(p.Region.Dx(), p.Region.Dy(), area, multiple)
	}
	p.Canvas, p.PasteMask, p.cropped = canvas, mask, true
	p.Init = imaging.Resize(imaging.Crop(canvas, p.Region), p.Width, p.Height, imaging.Lanczos)
	p.Mask = ScaleMask(grayOf(imaging.Crop(mask, p.Region)), p.Width, p.Height)
	return p, nil
}

// Finish is the picture to save from the pipeline's result at Width×Height: pasted back into
// the canvas through the feathered mask when KeepOriginal (the original's pixels exact where
// the mask is black); without it the result itself, or in the masked-area mode the canvas with
// the result's region replaced.
func (p *Prepared) Finish(result *image.NRGBA) (*image.NRGBA, error) {
	if b := result.Bounds(); b.Dx() != p.Width || b.Dy() != p.Height {
		return nil, fmt.Errorf("the result is %d×%d but the run was prepared for %d×%d", b.Dx(), b.Dy(), p.Width, p.Height)
	}
	gen := result
	if p.cropped {
		back := imaging.Resize(result, p.Region.Dx(), p.Region.Dy(), imaging.Lanczos)
		gen = imaging.Paste(p.Canvas, back, p.Region.Min)
		if !p.keep {
			return gen, nil
		}
		// Outside the region the canvas is kept whatever the mask says (the run never saw it).
		m := image.NewGray(p.PasteMask.Rect)
		draw.Draw(m, p.Region, p.PasteMask, p.Region.Min, draw.Src)
		return PasteBack(p.Canvas, gen, m)
	}
	if !p.keep || p.PasteMask == nil {
		return imaging.Clone(gen), nil
	}
	return PasteBack(p.Canvas, gen, p.PasteMask)
}
