package pipelinemetal

import (
	"strings"

	"easel/engine/ml/metal"
	"easel/engine/pipeline"
	"easel/kernels/device"
)

// The Metal networks' recoveries as the pipeline reports them (pipeline.Recovery): each retry that
// passed (the denoiser's guard widened after an overflow; a pass or call run again in shorter
// command buffers after a watchdog stop, or after releasing memory — the denoiser's, the text
// encoder's and the VAE's) and a denoiser step's decline, after which the Runner moves the run to
// the CPU. The pipeline tells each kind once per run and network.

// recoverer turns the denoiser's retries and its steps' declines into the site's recoveries.
type recoverer struct{ s pipeline.Site }

// retried is qi21metal.Options.OnRetry. A retry that failed is followed by another retry or a
// decline, which is what the user hears about.
func (rc recoverer) retried(r metal.Retry) {
	if !r.OK || rc.s.Recovered == nil {
		return
	}
	call := callOf(r.Stage)
	// the device's "ran again with …" → "ran the step again with …"
	what := strings.Replace(r.What, "ran again", "ran "+theCall(call)+" again", 1)
	rec := pipeline.Recovery{Device: "Metal", Call: call}
	switch r.Kind {
	case "overflow":
		// "half precision overflowed at …; ran the step again with that guard widened to N bits"
		happened, done, _ := strings.Cut(what, "; ")
		rec.Kind = pipeline.RecoveryOverflow
		rec.What = "the GPU's " + happened + "; Easel " + done + ", and keeps that guard for this model"
		rec.Means = "the image is unaffected (within half precision's usual rounding)"
	case device.ErrorTimeout.String():
		rec.Kind = pipeline.RecoveryTimeout
		rec.What = "the GPU's watchdog stopped a long command buffer; Easel " + what + ", and keeps doing so on this Mac"
		rec.Means = "the image is unaffected (the same numbers, a little slower)"
	case device.ErrorOutOfMemory.String():
		rec.Kind = pipeline.RecoveryOutOfMemory
		rec.What = "the GPU ran out of memory; Easel " + what
		rec.Means = "the image is unaffected"
	default:
		return
	}
	rc.s.Recovered(rec)
}

// stepDeclined is the Runner's step-decline hook: the step and the rest of the run go to the CPU.
func (rc recoverer) stepDeclined(d *metal.Declined) {
	if rc.s.Recovered == nil {
		if rc.s.Declined != nil {
			rc.s.Declined(decline(d))
		}
		return
	}
	rc.s.Recovered(pipeline.Recovery{Kind: pipeline.RecoveryToCPU, Device: "Metal", Call: "a step",
		What:  "the GPU could not finish the step (" + d.Reason + "); Easel ran it again on the CPU",
		Means: "the rest of this run is on the CPU (slower; the next run starts on the GPU again)"})
}

// theCall is call with the definite article ("a step" → "the step").
func theCall(call string) string {
	if rest, ok := strings.CutPrefix(call, "a "); ok {
		return "the " + rest
	}
	return call
}

// callOf is what a retry's stage ("denoiser step", "denoiser prefill"; "VAE", "text encoder"
// for a whole call of those) ran.
func callOf(stage string) string {
	switch {
	case strings.HasSuffix(stage, "step"):
		return "a step"
	case strings.HasSuffix(stage, "prefill"):
		return "the prefill"
	}
	return "the " + stage
}
