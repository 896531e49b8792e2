// Package upscalers is the app's library of learned upscalers (engine/upscale's networks): the
// folder of .pth and .safetensors files in Easel's data folder (or the one --upscalers names),
// listed with what each file is; a file added to it (the window asks first: Inspect says what the
// file is); and a Runner that upscales a picture with one — on the Metal device when there is one,
// the CPU when Metal declines — to any size (the network's scale, then Lanczos for the rest, as
// A1111 does), with progress per tile and cancellation. The CLI (`easel upscale`), the server
// (`/sdapi/v1/upscalers`, extra-single-image, hr_upscaler), the hi-res pass's first stage
// (app/hires) and the window use it.
package upscalers
