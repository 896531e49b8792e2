package progress

import (
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"easel/engine/pipeline"
)

// Step times come from the gaps between step events; the caption names the slowest step.
func TestStepTimesFromEvents(t *testing.T) {
	test.NewTempApp(t)
	p := NewTimingPanel(170)
	p.StartRun()
	for _, ev := range []pipeline.Event{
		{Stage: pipeline.StagePrefill, Elapsed: 5 * time.Second},
		{Stage: pipeline.StageDenoising, Step: 0, Elapsed: 6 * time.Second},
		{Stage: pipeline.StageDenoising, Step: 1, Elapsed: 8 * time.Second},
		{Stage: pipeline.StageDenoising, Step: 2, Elapsed: 11 * time.Second},
		{Stage: pipeline.StageDenoising, Step: 3, Elapsed: 13500 * time.Millisecond},
	} {
		p.Observe(ev)
	}
	if got, want := p.StepText.Text, "Per step: 2.0–3.0 s (slowest: step 2; last 2.5 s)"; got != want {
		t.Errorf("caption %q, want %q", got, want)
	}
	p.StartRun()
	if len(p.stepTimes) != 0 || p.StepText.Text != "Per-step time appears here during a run." {
		t.Errorf("a new run keeps %v / %q", p.stepTimes, p.StepText.Text)
	}
}
