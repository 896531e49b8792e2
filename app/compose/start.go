package compose

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"

	"easel/app/imagefile"
	"easel/app/imagework"
	"easel/engine/condimage"
	"easel/engine/imageio"
	"easel/engine/pipeline"
)

// DefaultStrength is the strength a start image is reworked with when none is chosen:
// diffusers' img2img default (1 when the canvas is extended: the new area starts from noise).
const DefaultStrength = 0.6

// Start is the picture a draft starts from instead of noise: refined (img2img) at Strength,
// repainted where Mask is white (inpainting), or extended by Extend (outpainting). It is read
// with the condition images' limits.
type Start struct {
	Name   string // the file name, or "pasted image"
	SHA256 string // of the file's bytes
	Image  *image.NRGBA
	// Strength in (0, 1]; 0 means DefaultStrength (1 with Extend).
	Strength float64
	// Mask, when not nil, is the region to repaint (white), as painted or loaded; MaskName and
	// MaskSHA256 identify a loaded mask file.
	Mask                 *image.Gray
	MaskName, MaskSHA256 string
	// MaskGrow and MaskBlur (pixels) grow and feather the mask; MaskCrop works on the masked area
	// only, with CropPadding pixels around it.
	MaskGrow    int
	MaskBlur    float64
	MaskCrop    bool
	CropPadding int
	// DiscardOriginal turns the paste-back off: the saved image is the model's everywhere.
	DiscardOriginal bool
	// Extend grows the canvas.
	Extend imagework.Margins
	// CropOffset moves the crop a chosen output size makes of the (extended) image off its centre,
	// in the image's pixels (imagework.Options.CropOffset: clamped inside; zero: centred).
	CropOffset image.Point
}

// LoadStart reads a start image file (imageio's limits, as for condition images).
func LoadStart(path string) (*Start, error) {
	c, err := LoadCondition(path)
	if err != nil {
		return nil, err
	}
	return &Start{Name: c.Name, SHA256: c.SHA256, Image: c.Image}, nil
}

// LoadMask reads a mask file into s: luminance, transparent = keep (imagework.MaskFromImage).
func (s *Start) LoadMask(path string) error {
	img, err := imageio.Load(path)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", path, err)
	}
	sum := sha256.Sum256(data)
	s.Mask, s.MaskName, s.MaskSHA256 = imagework.MaskFromImage(img), filepath.Base(path), hex.EncodeToString(sum[:])
	return nil
}

// RunStrength is the strength the run uses.
func (s *Start) RunStrength() float64 {
	switch {
	case s.Strength != 0:
		return s.Strength
	case !s.Extend.IsZero():
		return 1
	}
	return DefaultStrength
}

// Job is a draft's run: the pipeline request and, for a start image, how its result becomes the
// picture to save.
type Job struct {
	Request  pipeline.Request
	Prepared *imagework.Prepared // nil without a start image
	// Notices are sentences about what was adjusted (a mask scaled to the image).
	Notices []string
}

// Finish is the picture to save from the run's result: the result pasted back into the start
// image's canvas through the feathered mask, or the result itself.
func (j *Job) Finish(res *pipeline.Result) (*image.NRGBA, error) {
	if j.Prepared == nil {
		return res.Image, nil
	}
	return j.Prepared.Finish(res.Image)
}

// Job is the draft's run with a given seed.
func (d *Draft) Job(seed uint64) (Job, error) {
	r, err := d.Request(seed)
	if err != nil || d.Start == nil {
		return Job{Request: r, Notices: d.moveNoise(&r)}, err
	}
	s := d.Start
	if st := s.RunStrength(); !(st > 0 && st <= 1) {
		return Job{}, fmt.Errorf("%w: strength %g is outside (0, 1]: choose a value above 0 and at most 1", pipeline.ErrSettings, st)
	}
	o := imagework.Options{Multiple: SizeMultiple, Mask: s.Mask, MaskGrow: s.MaskGrow, MaskBlur: s.MaskBlur,
		CropMasked: s.MaskCrop, CropPadding: s.CropPadding, WorkArea: d.resolution() * d.resolution(),
		KeepOriginal: !s.DiscardOriginal, Extend: s.Extend, CropOffset: s.CropOffset}
	switch {
	case r.Width > 0 && r.Height > 0:
		o.Width, o.Height = r.Width/SizeMultiple*SizeMultiple, r.Height/SizeMultiple*SizeMultiple
		if o.Width < SizeMultiple || o.Height < SizeMultiple {
			return Job{}, fmt.Errorf("%w: %d×%d is smaller than %d pixels on a side once rounded down to a multiple of %d", pipeline.ErrSize, r.Width, r.Height, SizeMultiple, SizeMultiple)
		}
	case r.Aspect > 0:
		w, h := condimage.CalculateDimensions(float64(d.resolution())*float64(d.resolution()), r.Aspect)
		o.Width, o.Height = w/SizeMultiple*SizeMultiple, h/SizeMultiple*SizeMultiple
	}
	p, err := imagework.Prepare(s.Image, o)
	if errors.Is(err, imagework.ErrNothingToRepaint) {
		return Job{}, err
	}
	if err != nil {
		return Job{}, fmt.Errorf("%w: %w", pipeline.ErrSettings, err)
	}
	r.Width, r.Height, r.Aspect = p.Width, p.Height, 0
	r.Init = &pipeline.InitImage{Image: p.Init, Strength: s.RunStrength(), Mask: p.Mask}
	return Job{Request: r, Prepared: p, Notices: append(p.Notices, d.moveNoise(&r)...)}, nil
}

// startSettings are what the PNG records of the start image (see imagefile.InitSettings).
func (s *Start) settings(fit bool) *imagefile.InitSettings {
	in := &imagefile.InitSettings{Image: imagefile.ImageRef{Name: s.Name, SHA256: s.SHA256}, Strength: s.RunStrength(),
		MaskBlur: s.MaskBlur, MaskGrow: s.MaskGrow, MaskCrop: s.MaskCrop, CropPadding: s.CropPadding, KeepOriginal: !s.DiscardOriginal,
		Extend: [4]int{s.Extend.Left, s.Extend.Top, s.Extend.Right, s.Extend.Bottom}, CropOffset: [2]int{s.CropOffset.X, s.CropOffset.Y}}
	if s.Mask != nil {
		in.Mask = &imagefile.ImageRef{Name: s.MaskName, SHA256: s.MaskSHA256}
	}
	if fit {
		in.Fit = "cover"
	}
	return in
}

// StartFromSettings is the start image an image's settings record, from its embedded copies (nil
// when it has none).
func StartFromSettings(s *imagefile.Settings) *Start {
	in := s.Init
	if in == nil || s.InitImage == nil {
		return nil
	}
	st := &Start{Name: in.Image.Name, SHA256: in.Image.SHA256, Image: s.InitImage, Strength: in.Strength,
		Mask: s.MaskImage, MaskGrow: in.MaskGrow, MaskBlur: in.MaskBlur, MaskCrop: in.MaskCrop, CropPadding: in.CropPadding,
		DiscardOriginal: !in.KeepOriginal, Extend: imagework.Margins{Left: in.Extend[0], Top: in.Extend[1], Right: in.Extend[2], Bottom: in.Extend[3]},
		CropOffset: image.Pt(in.CropOffset[0], in.CropOffset[1])}
	if in.Mask != nil {
		st.MaskName, st.MaskSHA256 = in.Mask.Name, in.Mask.SHA256
	}
	return st
}
