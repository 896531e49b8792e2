// Package imagework is the pixel-space side of working on an image: everything around the
// pipeline's Request.Init (engine/pipeline.InitImage), which takes the image and its mask
// already at the size the model runs at.
//
// Before a run: an init image is fitted to the output size (cover-crop, or the size follows the
// image); a mask is scaled to the image, grown (dilated) and feathered (Gaussian blur), because
// one latent cell covers 16×16 pixels; an extended canvas gets its new area filled with the
// image's blurred edge colours and a mask feathered into the old edge; the "only the masked area"
// mode crops around the mask with padding and scales the crop to the model's working size.
// After the run: the result is pasted back through the feathered mask, so where the mask is
// black the saved image keeps the original pixels exactly (Draw Things' "preserve original").
// Prepare and Prepared.Finish do the whole flow; the pieces are exported for the window's
// editors. Resizing, blurring, cropping and pasting use github.com/disintegration/imaging.
package imagework
