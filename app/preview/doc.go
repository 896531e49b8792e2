// Package preview turns a step's x0 estimate — packed normalized latents [h·w, 64] — into a small
// RGBA picture for the live canvas, one pixel per latent (16×16 image pixels), with an affine map
// from the 64 channels to R, G, B, A: four dot products per pixel, so a preview costs
// microseconds where a real VAE decode costs seconds.
//
// The map is calibrated from the opened model's own VAE (Calibrate, Calibrator): the built-in
// pictures (assets/calibration) are encoded and decoded by it, and least squares (Fit) maps each
// latent token to the mean of the 16×16 patch the decoder makes of it. Calibrator runs this in
// the background once per model and caches the result in the app-support folder under a key over
// the VAE tensors' recorded hashes (ModelKey); until it is ready, previews are Neutral (grey,
// from the frame's own main direction of variation), which claims no colours.
//
// assets/preview keeps the projection fitted offline on the golden tiny model
// (TestFitProjection, assets/preview/README.md), which tests use as a fixed map.
package preview
