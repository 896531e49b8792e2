package pipeline_test

import (
	"errors"
	"slices"
	"testing"

	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/engine/ml/cpu"
	"easel/engine/pipeline"
	"easel/engine/pipeline/pipelinetest"
	"easel/internal/tinymodel"
)

// TestResumeIsExact: a run resumed from the state after any step, of any image of a batch, ends
// as the uninterrupted run bit for bit (on the CPU).
func TestResumeIsExact(t *testing.T) {
	p := tinyPipeline(t)
	reqs := pipelinetest.ResumeRequests()
	pipelinetest.CheckResumeIsExact(t, p, reqs["plain"], pipelinetest.StateAt{Step: 1}, pipelinetest.StateAt{Step: 3}, pipelinetest.StateAt{Step: 4})
	pipelinetest.CheckResumeIsExact(t, p, reqs["cfg+image"], pipelinetest.StateAt{Step: 2})
	pipelinetest.CheckResumeIsExact(t, p, reqs["inpaint"], pipelinetest.StateAt{Step: 1}, pipelinetest.StateAt{Step: 2})
	pipelinetest.CheckResumeIsExact(t, p, reqs["batch"], pipelinetest.StateAt{Image: 1, Step: 2}, pipelinetest.StateAt{Image: 2, Step: 4})
}

// TestResumeThatDoesNotFitIsRefused: a state of another size, past the schedule's end or of an
// image the batch does not have is refused before any work.
func TestResumeThatDoesNotFitIsRefused(t *testing.T) {
	p := tinyPipeline(t)
	req := pipelinetest.ResumeRequests()["plain"]
	values := 4 * 4 * 64
	for name, r := range map[string]*pipeline.Resume{
		"size":     {Step: 1, Latents: make([]float32, values/2)},
		"step":     {Step: 5, Latents: make([]float32, values)},
		"image":    {Image: 1, Step: 1, Latents: make([]float32, values), Finished: [][]float32{make([]float32, values)}},
		"finished": {Step: 1, Latents: make([]float32, values), Finished: [][]float32{make([]float32, values)}},
	} {
		again := req
		again.Resume = r
		if _, err := p.Run(t.Context(), again, nil); !errors.Is(err, pipeline.ErrResume) {
			t.Errorf("%s: %v, want ErrResume", name, err)
		}
	}
}

func tinyPipeline(t *testing.T) *pipeline.Pipeline {
	t.Helper()
	f, err := cmf.Open(tinymodel.Path(t, convert.Options{Profile: convert.ProfileF16}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	p, err := pipeline.New(f, cpu.New(), pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestResumeShowsItsLatentsAtOnce: a resumed run's first denoising event, before any step runs,
// carries a preview of the saved latents at the saved step.
func TestResumeShowsItsLatentsAtOnce(t *testing.T) {
	p := tinyPipeline(t)
	req := pipelinetest.ResumeRequests()["plain"]
	var saved *pipeline.Resume
	req.OnStep = func(s pipeline.StepState) {
		if s.Step == 2 {
			saved = &pipeline.Resume{Step: 2, Latents: append([]float32(nil), s.Latents...)}
		}
	}
	if _, err := p.Run(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	req.OnStep, req.Resume = nil, saved
	// Read as they come (a preview still queued when the next step's arrives would be dropped).
	events := make(chan pipeline.Event)
	shown := make(chan bool, 1)
	go func() {
		found := false
		for ev := range events {
			if ev.Stage == pipeline.StageDenoising && ev.Sigma == 0 && ev.Preview != nil {
				found = found || ev.Step == 2 && slices.Equal(ev.Preview.X0, saved.Latents)
			}
		}
		shown <- found
	}()
	if _, err := p.Run(t.Context(), req, events); err != nil {
		t.Fatal(err)
	}
	if !<-shown {
		t.Error("no preview of the saved latents at step 2 before the resumed run's first step")
	}
}
