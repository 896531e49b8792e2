// Package preview turns a step's x0 estimate — packed normalized latents [h·w, 64] — into a small
// RGBA picture for the live canvas, one pixel per latent (16×16 image pixels), with a fitted
// affine map from the 64 channels to R, G, B, A: four dot products per pixel, so a preview costs
// microseconds where a real VAE decode costs seconds.
//
// The map is fitted by least squares (Fit) from real VAE decodes, averaging each decoded 16×16
// patch, and stored in assets/preview as JSON. TestFitProjection regenerates it (see
// assets/preview/README.md).
package preview
