package pipelinetest

import (
	"image"
	"image/color"
	"slices"
	"testing"

	"easel/engine/pipeline"
)

// StateAt names a state to resume from: image Image (0-based) of the batch after Step steps.
type StateAt struct{ Image, Step int }

// CheckResumeIsExact runs req once without a stop, keeping the state after each step at, then
// resumes req from every kept state: each resumed run must give every image of the batch, its
// pixels and its final latents, equal to the uninterrupted run's bit for bit.
func CheckResumeIsExact(t *testing.T, p *pipeline.Pipeline, req pipeline.Request, at ...StateAt) {
	t.Helper()
	kept := map[StateAt]*pipeline.Resume{}
	full := req
	full.OnStep = func(s pipeline.StepState) {
		k := StateAt{s.Image, s.Step}
		if !slices.Contains(at, k) {
			return
		}
		r := &pipeline.Resume{Image: s.Image, Step: s.Step, Latents: slices.Clone(s.Latents)}
		for _, f := range s.Finished {
			r.Finished = append(r.Finished, slices.Clone(f))
		}
		kept[k] = r
	}
	want, err := p.Run(t.Context(), full, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range at {
		r := kept[k]
		if r == nil {
			t.Fatalf("the run never reported image %d after step %d", k.Image+1, k.Step)
		}
		again := req
		again.Resume = r
		got, err := p.Run(t.Context(), again, nil)
		if err != nil {
			t.Fatalf("resuming at image %d step %d: %v", k.Image+1, k.Step, err)
		}
		wants, gots := batchOf(want), batchOf(got)
		if len(gots) != len(wants) {
			t.Fatalf("resumed at image %d step %d: %d images, want %d", k.Image+1, k.Step, len(gots), len(wants))
		}
		for i := range wants {
			if !slices.Equal(gots[i].Latents, wants[i].Latents) || !slices.Equal(gots[i].Image.Pix, wants[i].Image.Pix) {
				t.Errorf("resumed at image %d step %d: image %d differs from the uninterrupted run's", k.Image+1, k.Step, i+1)
			}
		}
	}
}

// batchOf is a result's images in order.
func batchOf(r *pipeline.Result) []*pipeline.Result {
	if r.Batch != nil {
		return r.Batch
	}
	return []*pipeline.Result{r}
}

// ResumeRequests are the runs a resume must continue exactly: plain, CFG with a condition image,
// inpainting (img2img with a mask), and a batch of three under CFG.
func ResumeRequests() map[string]pipeline.Request {
	start := image.NewNRGBA(image.Rect(0, 0, 64, 64))
	mask := image.NewGray(start.Rect)
	for y := range 64 {
		for x := range 64 {
			start.SetNRGBA(x, y, color.NRGBA{uint8(4 * x), uint8(4 * y), 128, 255})
			if x < 32 {
				mask.SetGray(x, y, color.Gray{255})
			}
		}
	}
	base := pipeline.Request{Prompt: "a lighthouse on a cliff", NegativePrompt: "fog", Width: 64, Height: 64, Steps: 4, Seed: 11}
	cfg := base
	cfg.CFG, cfg.Images = 3, []*image.NRGBA{start}
	inpaint := base
	inpaint.Steps, inpaint.Init = 6, &pipeline.InitImage{Image: start, Strength: 0.7, Mask: mask}
	batch := base
	batch.CFG, batch.Count = 2, 3
	return map[string]pipeline.Request{"plain": base, "cfg+image": cfg, "inpaint": inpaint, "batch": batch}
}
