// Package memplan predicts, before a run, how much memory a generation will need — per
// component: the weights mapped from the model file, the denoiser's cached prefix keys and values
// per program, the denoiser's activations and the VAE's — and compares the peak with the device
// budget, so the window can refuse a size that would swap and suggest the largest one that fits.
//
// The prediction comes from the model geometry and the same counting rules the pipeline's live
// ledger uses (engine/pipeline/memory.go), plus the VAE's counted per-tile activation peak
// (docs/BENCHMARKS.md, VAE section). On Metal the networks' working sets are their device
// buffers, counted by the same functions their decline checks use (qi21metal.PlanProgramFor,
// qwen3vlmetal.PlanEncodeFor, vaemetal.PlanDecodeFor and PlanEncodeFor). It
// is an estimate from shapes, not a measurement.
package memplan
