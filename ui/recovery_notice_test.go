package ui

import (
	"context"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"easel/engine/pipeline"
)

// recoveringGen is the scripted generator whose run first reports a device's recovery, as the
// pipeline sends it (a notice event carrying its record).
type recoveringGen struct{ *scriptedGen }

const recoveryNotice = "Step 1 of 4 on Metal: the GPU's watchdog stopped a long command buffer; Easel ran the step again with one transformer block per command buffer, and keeps doing so on this Mac; the image is unaffected (the same numbers, a little slower)."

func (g recoveringGen) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	inner := make(chan pipeline.Event)
	go func() {
		events <- pipeline.Event{Stage: pipeline.StageDenoising, Steps: fakeSteps, Notice: recoveryNotice,
			Recovery: &pipeline.Recovery{Kind: pipeline.RecoveryTimeout, Device: "Metal", Network: "the denoiser", Call: "a step", Step: 1, Steps: fakeSteps, Count: 1, Notice: recoveryNotice}}
		for ev := range inner {
			events <- ev
		}
		close(events)
	}()
	return g.scriptedGen.Run(ctx, req, inner)
}

// TestWindowShowsARecovery: a device's recovery during a job is said under the controls with the
// job's number, as the window says any notice.
func TestWindowShowsARecovery(t *testing.T) {
	gen := recoveringGen{newScriptedGen()}
	h := newHarnessWith(t, 16e9, func(h *harness, d *Deps) { d.Generator = gen })
	test.Tap(h.s.generateBtn)
	<-gen.started
	h.pump("the recovery notice", func() bool { return strings.Contains(h.s.message.Text, recoveryNotice) })
	if !strings.HasPrefix(h.s.message.Text, "Job ") {
		t.Errorf("the notice %q does not name its job", h.s.message.Text)
	}
	for range fakeSteps {
		gen.step <- struct{}{}
	}
	gen.release <- struct{}{}
	h.pump("the job done", func() bool { return strings.Contains(h.s.progress.Stage.Text, "done") })
}
