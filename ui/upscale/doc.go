// Package upscale is the window's learned upscalers (app/upscalers): the Settings choice of
// one (remembered in settings.Settings.Upscaler), the question asked when an upscaler file is
// dropped on the window, the gallery's Upscale with the chosen upscaler or Lanczos (run off the
// UI goroutine with progress per tile and cancel, saved into the history naming the upscaler),
// a hi-res pass's first stage, the runner kept open for the choice, and the memory prediction of
// an upscale. Upscaling is that work in the window: it says what happened through the window
// model's notice (ui/model) and reaches the rest of the window (the progress line, the memory
// panel, the history, the question stack) only through its Host; it has no dependency on the
// window's shell.
package upscale
