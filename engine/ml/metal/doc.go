// Package metal is the Metal runtime every network's device path shares: the Mac's device
// (SystemDevice, over darwinkit; only on a Mac, type-checked elsewhere), the device's limits
// (DeviceLimits), the weight arena that reads a model file's mapping in place as no-copy buffers
// split at the device's largest buffer (PlanWeightArena, WeightArena), the *Declined error a
// device path returns when work does not fit or is not handled (then the CPU runs it), and the
// environment knobs (KnobsFromEnv: profiling, diagnostics, the denoiser's half guards).
//
// The networks' own device programs live beside their networks: the denoiser's fused program in
// engine/qi21/qi21metal, the text encoder's and the VAE's (over engine/ml/metalops, the op set on
// a device) in engine/qwen3vl/qwen3vlmetal and engine/vae/vaemetal. This package imports none of
// them and no network.
package metal
