package metal

import (
	"errors"
	"fmt"

	"easel/kernels/device"
)

// GPU errors handled by kind (device.ErrorKind): a network's program runs a unit of work (a
// prefill, a step, a call) through RunRecovering, which retries what a retry can fix and turns
// the rest into a *Declined whose sentence says what happened and what to do, so the CPU takes
// over and no job dies of a GPU error without one.
//
//   - timeout (the watchdog, "Impacting Interactivity"): run the unit again in shorter command
//     buffers (Recovery.Shorten: one block per buffer, then the large GEMMs in row chunks each in
//     its own buffer), remembered for the device (DevicePolicy, policy.go);
//   - out of memory: release what is cached and re-plan (Recovery.Release: the denoiser shrinks a
//     step's activation buffers to the target's rows), and run once more;
//   - page fault: the model file under the no-copy weight buffers went away — returned as it is,
//     so the pipeline reports the model-file error it reports for a CPU fault;
//   - device lost, or anything else: declined with a sentence.

// Recovery is what a unit of work can do to pass after a GPU error.
type Recovery struct {
	// Shorten makes the next run use shorter command buffers and says how ("one block per
	// command buffer"); ok is false when they are already as short as they go.
	Shorten func() (how string, ok bool)
	// Release frees cached device memory and re-plans before the one retry after an
	// out-of-memory error, and says what it did, a clause after "Easel" ("released cached
	// buffers", "" for that); nil when there is nothing to release.
	Release func() (what string)
}

// Retry records one recovery attempt, for notices and diagnostics.
type Retry struct {
	Stage string `json:"stage"`
	Kind  string `json:"kind"`
	// What was done ("one block per command buffer", "released cached buffers and planned again").
	What string `json:"what"`
	OK   bool   `json:"ok"`
}

// maxShortenings bounds the timeout retries (each halves the command buffers at least).
const maxShortenings = 3

// RunRecovering runs unit, recovering from GPU errors as the package comment says. It returns the
// retries made and unit's last error: nil, a *Declined carrying the kind's sentence, or an error
// that is not the GPU's (returned as is, like a page fault's).
func RunRecovering(stage string, unit func() error, rec Recovery) ([]Retry, error) {
	var retries []Retry
	err := unit()
	shortened, released := 0, false
	for err != nil {
		kind := device.KindOf(err)
		switch {
		case kind == device.ErrorTimeout && rec.Shorten != nil && shortened < maxShortenings:
			how, ok := rec.Shorten()
			if !ok {
				break
			}
			shortened++
			err = unit()
			retries = append(retries, Retry{Stage: stage, Kind: kind.String(), What: "ran again with " + how, OK: err == nil})
			continue
		case kind == device.ErrorOutOfMemory && !released:
			released = true
			what := "ran again"
			if rec.Release != nil {
				did := rec.Release()
				if did == "" {
					did = "released cached buffers"
				}
				what = did + " and ran again"
			}
			err = unit()
			retries = append(retries, Retry{Stage: stage, Kind: kind.String(), What: what, OK: err == nil})
			continue
		}
		return retries, gpuDecline(stage, err)
	}
	return retries, nil
}

// gpuDecline turns a GPU error RunRecovering could not fix into a *Declined with a sentence; other
// errors (a page fault, which the pipeline reports as the model file's, and errors that are not
// the GPU's) pass through.
func gpuDecline(stage string, err error) error {
	var cb *device.CommandBufferError
	if !errors.As(err, &cb) {
		return err
	}
	if s := GPUErrorAdvice(stage, err); s != "" {
		return &Declined{Reason: s}
	}
	return err
}

// GPUErrorAdvice is the sentence for a GPU error that stopped stage on the device: what happened
// and what to do ("" for a page fault and for errors that are not the GPU's, which have their own
// message).
func GPUErrorAdvice(stage string, err error) string {
	var cb *device.CommandBufferError
	if !errors.As(err, &cb) {
		return ""
	}
	switch cb.Kind {
	case device.ErrorTimeout:
		return fmt.Sprintf("the GPU's watchdog stopped the %s even in the shortest command buffers (%s); closing other apps that use the GPU (games, video, other image tools) may let it run there next time", stage, cb.Message)
	case device.ErrorOutOfMemory:
		return fmt.Sprintf("the GPU ran out of memory for the %s even after releasing cached buffers and re-planning what it could (%s); close other apps or choose a smaller size to run it on the GPU", stage, cb.Message)
	case device.ErrorPageFault:
		return ""
	case device.ErrorDeviceLost:
		return fmt.Sprintf("macOS stopped this app's use of the GPU during the %s (%s); quit and reopen Easel to use the GPU again", stage, cb.Message)
	}
	return fmt.Sprintf("the GPU failed during the %s (%s); if this happens again, please report it with the output of `easel diagnose`", stage, cb.Message)
}
