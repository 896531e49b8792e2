// Package sched is the flow-matching noise schedule of Qwen-Image-2.1 and its Euler update: the
// sigma grid the denoiser walks from pure noise (σ = 1) to the image (σ = 0), computed exactly as
// diffusers' FlowMatchEulerDiscreteScheduler does (qi21-spec §5), float32 rounding included.
//
// A schedule comes from the diffusers scheduler_config.json (ParseConfig) and either a step count
// with the target's token count (Config.Schedule: linspace, dynamic exponential shift, terminal
// stretch) or a fixed list of sigmas stored by a distilled checkpoint (Config.ScheduleFromSigmas,
// SampleSigmas).
package sched
