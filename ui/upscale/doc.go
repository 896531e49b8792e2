// Package upscale is the window's learned upscalers (app/upscalers): the Settings choice of
// one (remembered in settings.Settings.Upscaler), the question asked when an upscaler file is
// dropped on the window, the gallery's Upscale with the chosen upscaler or Lanczos (run off the
// UI goroutine with progress per tile and cancel, saved into the history naming the upscaler),
// the runner kept open for the choice, and the memory prediction of an upscale. It has no
// dependency on the window's shell: the shell gives it the library, the device and the history.
package upscale
