package pipeline

import (
	"slices"
	"testing"

	"easel/engine/ml/cpu"
)

// TestStopDecodesTheStepReached: a request whose Stop is closed before it runs ends after its
// first step: its latents are that step's x0 estimate (the one the step's preview carried), it
// is decoded like any result, and it is marked Interrupted at step 1 of its steps. The same
// pipeline then runs the request without Stop to all its steps.
func TestStopDecodesTheStepReached(t *testing.T) {
	req := behaviourRequest(t, 1)
	req.Steps = 4
	p := newTinyPipeline(t, cpu.New())
	stop := make(chan struct{})
	close(stop)
	req.Stop = stop
	events := make(chan Event, 64)
	var x0 []float32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range events {
			if ev.Stage == StageDenoising && ev.Step == 1 && ev.Preview != nil {
				x0 = slices.Clone(ev.Preview.X0)
			}
		}
	}()
	res, err := p.Run(t.Context(), req, events)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.StepsDone != 1 || res.StepsRun != 4 || res.Image == nil {
		t.Fatalf("interrupted %v at step %d of %d, image %v; want step 1 of 4 with an image", res.Interrupted, res.StepsDone, res.StepsRun, res.Image != nil)
	}
	if x0 == nil || !slices.Equal(res.Latents, x0) {
		t.Errorf("the interrupted result's latents are not step 1's x0 estimate (have the step's preview: %v)", x0 != nil)
	}
	req.Stop = nil
	full, err := p.Run(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if full.Interrupted || full.StepsDone != 4 || slices.Equal(full.Latents, res.Latents) {
		t.Errorf("the run without Stop: interrupted %v, %d steps done", full.Interrupted, full.StepsDone)
	}
}
