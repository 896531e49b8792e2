package imagework

import (
	"fmt"
	"image"

	"easel/app/compose"
	"easel/app/imagefile"
	"easel/app/imagework"
	"easel/app/maskpaint"
	"easel/engine/condimage"

	"easel/ui/model"
)

// RestoreStart makes the start image, mask and settings an image records the canvas document's
// again (a dropped PNG, a history image), after the model's draft restored the rest
// (model.Window.Restore, which takes the start image out of the draft and turns a size that
// followed the image into the custom size it made; the fit choice says it follows); it says what
// the artist should know ("" when nothing to say). An image made without a start image leaves the
// current one as it is.
func (r *Region) RestoreStart(set *imagefile.Settings) string {
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
	r.m.ReplaceCanvas(model.Canvas{Start: &model.StartImage{Image: c, Mask: mask}, Extend: in.Extend, FollowImage: in.Fit != "cover",
		CropOffset: image.Pt(in.CropOffset[0], in.CropOffset[1]), Strength: min(max(in.Strength, minStrength), 1), Feather: int(in.MaskBlur + 0.5), Grow: in.MaskGrow,
		Extras: compose.Start{MaskCrop: in.MaskCrop, CropPadding: in.CropPadding, DiscardOriginal: !in.KeepOriginal}})
	r.panel.load()
	r.panel.refresh()
	return note
}
