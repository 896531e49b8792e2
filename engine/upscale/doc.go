// Package upscale runs the learned upscalers artists already have: RRDBNet (ESRGAN, Real-ESRGAN
// x4plus/x2plus/anime 6B, BSRGAN, 4x-UltraSharp, NMKD Superscale, Remacri, most "4x-…" files) in
// the basicsr, old-ESRGAN and BSRGAN key layouts, and SRVGGNetCompact (realesr-general-x4v3,
// realesr-animevideov3), read from .safetensors or .pth (engine/torchfile: no pickle code runs).
//
// The architecture, scale, widths and depth come from the tensors' names and shapes (arch.go). The
// networks are written once over the ml op set plus four ops of their own (Backend: LeakyReLU,
// PReLU, pixel shuffle and unshuffle), so the CPU backend and a Metal device (upscalemetal) run the
// same code. Pictures are run the way Real-ESRGAN runs them (picture.go): RGB in [0, 1], clamp, ×255
// and round half to even; an alpha channel through the network as a grey picture and back as
// BT.601 grey; in tiles with a padding of input pixels around each (tile.go), so memory stays
// within a fixed budget and seams do not show; progress per tile, cancel between tiles. A dry run
// of the same code (plan.go) predicts a tile's memory.
package upscale
