package pipeline

import "fmt"

// A device recovers from some problems during a call without declining it: the GPU's half
// precision overflowed and a wider guard fixed it, the GPU's watchdog stopped a long command
// buffer and shorter ones passed, the GPU ran out of memory and a retry after releasing passed, or
// a step could not finish on the device and the rest of the run moved to the CPU. The placement
// reports each through Site.Recovered; Run tells the user once per kind per run, as an event
// whose Notice is the sentence and whose Recovery is the record, and lists them in
// Result.Recoveries (one per kind, with how often it happened).

// RecoveryKind is what a device recovered from.
type RecoveryKind string

// Recovery kinds.
const (
	// RecoveryOverflow: half precision overflowed; the call ran again with a wider guard.
	RecoveryOverflow RecoveryKind = "overflow"
	// RecoveryTimeout: the GPU's watchdog stopped a command buffer; the call ran again in shorter
	// ones (remembered for the device).
	RecoveryTimeout RecoveryKind = "timeout"
	// RecoveryOutOfMemory: the GPU ran out of memory; the call ran again after releasing.
	RecoveryOutOfMemory RecoveryKind = "out-of-memory"
	// RecoveryToCPU: a step could not finish on the device; it and the rest of the run ran on the
	// pipeline's backend.
	RecoveryToCPU RecoveryKind = "cpu"
)

// Recovery is one kind of recovery during a run, as the placement reports it and the pipeline
// completes it.
type Recovery struct {
	Kind RecoveryKind `json:"kind"`
	// Device is the device as the user knows it ("Metal"); Network the network ("the
	// denoiser", set by the pipeline); Call what was running ("the prefill", "a step").
	Device  string `json:"device"`
	Network string `json:"network"`
	Call    string `json:"call"`
	// What is what happened and what was done, a clause ("the GPU's half precision overflowed
	// at …; Easel widened that guard to 8 bits and ran the step again"); Means what it means
	// for the image ("the image is unaffected", "the rest of this run is on the CPU").
	What  string `json:"what"`
	Means string `json:"means"`
	// Step and Steps place the first occurrence among the run's steps (0: not during a step,
	// e.g. a prefill); Image is its image of a batch (0-based).
	Step  int `json:"step,omitempty"`
	Steps int `json:"steps,omitempty"`
	Image int `json:"image,omitempty"`
	// Count is how many times the run recovered this way (each notice is sent once).
	Count int `json:"count"`
	// Notice is the sentence for the user (what the event's Notice carries).
	Notice string `json:"notice"`
}

// sentence builds the notice: where, on which device, what happened and what it means.
func (r Recovery) sentence(images int) string {
	at := fmt.Sprintf("The %s's %s", trimThe(r.Network), trimThe(r.Call))
	if trimThe(r.Call) == trimThe(r.Network) { // a whole call of the VAE or the text encoder
		at = "The " + trimThe(r.Network)
	}
	if r.Step > 0 {
		at = fmt.Sprintf("Step %d of %d", r.Step, r.Steps)
		if images > 1 {
			at = fmt.Sprintf("Image %d, step %d of %d", r.Image+1, r.Step, r.Steps)
		}
	}
	s := at + " on " + r.Device + ": " + r.What
	if r.Means != "" {
		s += "; " + r.Means
	}
	return s + "."
}

func trimThe(s string) string {
	for _, p := range []string{"the ", "a "} {
		if len(s) > len(p) && s[:len(p)] == p {
			return s[len(p):]
		}
	}
	return s
}

// recovered is the network's Site.Recovered: the first of a kind in the run waits to be told,
// later ones are counted.
func (n *placed) recovered(r Recovery) {
	n.mu.Lock()
	defer n.mu.Unlock()
	r.Network = n.network
	for i := range n.runRecoveries {
		if n.runRecoveries[i].Kind == r.Kind {
			n.runRecoveries[i].Count++
			return
		}
	}
	r.Count = 1
	n.runRecoveries = append(n.runRecoveries, r)
	n.pendingRecoveries = append(n.pendingRecoveries, len(n.runRecoveries)-1)
}

// takeRecoveries returns the recoveries not told yet, placed at step (0: not during a step) of
// steps and image, and marks them told.
func (n *placed) takeRecoveries(step, steps, image, images int) []Recovery {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []Recovery
	for _, i := range n.pendingRecoveries {
		r := &n.runRecoveries[i]
		r.Step, r.Steps, r.Image = step, steps, image
		r.Notice = r.sentence(images)
		out = append(out, *r)
	}
	n.pendingRecoveries = nil
	return out
}

// recoveries are the run's recoveries so far, one per kind.
func (n *placed) recoveries() []Recovery {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]Recovery(nil), n.runRecoveries...)
}

// startRun forgets the last run's recoveries.
func (n *placed) startRun() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.runRecoveries, n.pendingRecoveries = nil, nil
}

// Recoveries are the devices' recoveries during the latest run (or since the pipeline was made,
// for Denoise called directly), one per kind and network, each with its count; also in
// Result.Recoveries.
func (p *Pipeline) Recoveries() []Recovery {
	var out []Recovery
	for _, n := range p.placements() {
		out = append(out, n.recoveries()...)
	}
	return out
}
