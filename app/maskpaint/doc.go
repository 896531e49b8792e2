// Package maskpaint is the inpainting mask an artist paints over an image in the window, without
// widgets: an *image.Gray at the image's own pixel size (white = repaint, black = keep), strokes
// of a round brush or eraser between pointer positions, invert, clear, and several levels of
// undo. The window draws it as a translucent overlay and sends it with the generation; the
// feathering and growing the model needs (one latent cell is 16×16 pixels) happen where the
// image is generated, not here.
package maskpaint
