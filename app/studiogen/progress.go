package studiogen

import (
	"easel/app/studio"
	"easel/engine/pipeline"
)

// RunReporting runs a render with an events channel of its own, hands each denoising step to
// progress as a studio.Step (with the step's preview as a PNG when previews is set and the step
// has one), and returns once every event has been read: a worker's progress, heartbeats and
// previews all come from here.
func RunReporting(run func(events chan<- pipeline.Event) (*pipeline.Result, error), previews bool, progress func(studio.Step)) (*pipeline.Result, error) {
	events := make(chan pipeline.Event)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for ev := range events {
			if ev.Stage != pipeline.StageDenoising || ev.Step == 0 {
				continue
			}
			st := studio.Step{N: ev.Step, Of: ev.Steps}
			if previews && ev.Preview != nil && ev.Preview.Image != nil {
				st.Preview = EncodePNG(ev.Preview.Image)
			}
			progress(st)
		}
	}()
	res, err := run(events)
	<-drained
	return res, err
}
