package ui

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/png"

	"easel/app/compose"
	"easel/app/imagefile"
	"easel/app/imagework"
	"easel/app/maskpaint"
	"easel/engine/condimage"
)

// startRecord is what a job was made from besides its draft: the start image, the mask as
// painted (nil: none), and the settings the PNG records with them.
type startRecord struct {
	image *imagefile.ImageRef
	img   *image.NRGBA
	mask  *image.Gray
	init  imagefile.InitSettings
}

// recordStart is the start image, mask and settings of the run being submitted (nil without a
// start image).
func (s *studio) recordStart() *startRecord {
	if s.start == nil {
		return nil
	}
	r := &startRecord{img: s.start.c.Image, init: imagefile.InitSettings{
		Image:    imagefile.ImageRef{Name: s.start.c.Name, SHA256: s.start.c.SHA256},
		Strength: s.runStrength(), MaskBlur: float64(s.feather), KeepOriginal: true, Extend: s.extend,
	}}
	if !s.followImage && s.extend == [4]int{} {
		r.init.Fit = "cover"
	}
	if !s.start.mask.Empty() {
		r.mask = s.start.mask.Clone()
	}
	return r
}

// addTo puts the record into a PNG's settings (off the UI goroutine: the mask's hash encodes it),
// unless they already carry a start image.
func (r *startRecord) addTo(set *imagefile.Settings) {
	if r == nil || set.Init != nil {
		return
	}
	init := r.init
	set.InitImage = r.img
	if r.mask != nil {
		var b bytes.Buffer
		if err := png.Encode(&b, r.mask); err == nil {
			sum := sha256.Sum256(b.Bytes())
			init.Mask = &imagefile.ImageRef{Name: "painted mask", SHA256: hex.EncodeToString(sum[:])}
		}
		set.MaskImage = r.mask
	}
	set.Init = &init
}

// restoreStart makes the start image, mask and settings an image records the window's again (a
// dropped PNG, a history image); it says what the artist should know ("" when nothing to say).
// An image made without a start image leaves the current one as it is.
func (s *studio) restoreStart(set *imagefile.Settings) string {
	if set == nil || set.Init == nil {
		return ""
	}
	in := set.Init
	if set.InitImage == nil {
		return fmt.Sprintf("This image was made from the start image %s, which the file does not hold: drop it on the canvas to start from it again.", in.Image.Name)
	}
	img := set.InitImage
	c := compose.Condition{Name: in.Image.Name, Image: img, SHA256: in.Image.SHA256}
	var err error
	if c.EncodedW, c.EncodedH, err = condimage.ConditionSize(img.Rect.Dx(), img.Rect.Dy(), compose.Resolution); err != nil {
		return fmt.Sprintf("The start image %s the file holds cannot be used: %v", in.Image.Name, err)
	}
	var note string
	mask := maskpaint.New(img.Rect.Dx(), img.Rect.Dy())
	if m := set.MaskImage; m != nil {
		if m.Rect.Dx() != img.Rect.Dx() || m.Rect.Dy() != img.Rect.Dy() {
			note = fmt.Sprintf("Its mask is %d×%d but the start image %d×%d: the mask was scaled to the image.", m.Rect.Dx(), m.Rect.Dy(), img.Rect.Dx(), img.Rect.Dy())
			m = imagework.ScaleMask(m, img.Rect.Dx(), img.Rect.Dy())
		}
		mask = maskpaint.From(m)
	}
	s.start = &startImage{c: c, mask: mask}
	s.extend = in.Extend
	s.followImage = in.Fit != "cover"
	s.strength = min(max(in.Strength, minStrength), 1)
	s.feather = int(in.MaskBlur + 0.5)
	s.work.load()
	s.work.refresh()
	return note
}
