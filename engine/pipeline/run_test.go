package pipeline

import (
	"errors"
	"strings"
	"testing"

	"easel/engine/ml/cpu"
	"easel/internal/pipelinecase"
)

// caseRequest is the request an artist would make for a case: its prompt strings, condition PNGs,
// settings and seed, nothing recorded.
func caseRequest(t *testing.T, c *pipelineCase) Request {
	return Request{Prompt: c.Prompt, NegativePrompt: c.Negative, Images: c.CondImages(t),
		Width: c.Width, Height: c.Height, Resolution: c.Resolution, Steps: c.Steps, CFG: c.CFG, Seed: c.Seed}
}

// TestGoldenPipelineRun runs every case through Run from its prompt strings, its condition PNGs
// (our loader and resize) and its seed, and compares the latents and the image with the
// reference's.
func TestGoldenPipelineRun(t *testing.T) {
	p := newTinyPipeline(t, nil)
	for _, c := range pipelineCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			res, err := p.Run(t.Context(), caseRequest(t, c), nil)
			if err != nil {
				t.Fatal(err)
			}
			steps, sshape := c.Floats(t, "steps_latents")
			per := sshape[2] * sshape[3]
			le := maxAbs(t, "final latents", res.Latents, steps[(sshape[0]-1)*per:])
			imgWant, ishape := c.Floats(t, "image_np")
			if res.Width != ishape[1] || res.Height != ishape[0] {
				t.Fatalf("made %d×%d, the reference %d×%d", res.Width, res.Height, ishape[1], ishape[0])
			}
			ie := maxAbs(t, "image", imageHWC(res.Decoded), imgWant)
			if !(le <= parityBound) || !(ie <= parityBound) {
				t.Errorf("from strings, PNGs and seed: final latents max |Δ| %.3g, image max |Δ| %.3g; want ≤ %g", le, ie, parityBound)
			}
			t.Logf("from strings, %d PNGs and seed %d: final latents max |Δ| %.3g, image max |Δ| %.3g", len(c.CondFiles), c.Seed, le, ie)
			if err := compare8Bit(res.Image.Pix, imgWant); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestRunInjectedNoiseAndSigmas: the recorded noise given as Request.Noise, and the unshifted
// grid linspace(1, 1/N, N) given as Request.Sigmas (it goes through the same shift and stretch),
// reproduce the reference exactly as the seed and the step count do.
func TestRunInjectedNoiseAndSigmas(t *testing.T) {
	p := newTinyPipeline(t, nil)
	c := pipelinecase.Pick(t, "two steps or more", func(c *pipelineCase) bool { return c.Steps >= 2 }, pipelinecase.Cheaper)
	req := caseRequest(t, c)
	req.Seed, req.Noise = 12345, c.RecordedNoise(t)
	req.Steps, req.Sigmas = 0, make([]float64, c.Steps)
	for i := range req.Sigmas {
		// numpy's linspace(1, 1/N, N): start + i·step, the last value set exactly.
		step := (1/float64(c.Steps) - 1) / float64(c.Steps-1)
		req.Sigmas[i] = 1 + float64(i)*step
	}
	req.Sigmas[c.Steps-1] = 1 / float64(c.Steps)
	res, err := p.Run(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := c.Floats(t, "image_np")
	if e := maxAbs(t, "image", imageHWC(res.Decoded), want); !(e <= parityBound) || res.Steps != c.Steps {
		t.Errorf("injected noise and sigmas: %d steps, image max |Δ| %.3g", res.Steps, e)
	}
}

// TestPlan: before any work, the plan gives each case's output size, program count and the
// prefix length the reference's first denoiser call had (text rows without the image slots, plus
// the condition latents).
func TestPlan(t *testing.T) {
	p := newTinyPipeline(t, nil)
	for _, c := range pipelineCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			before := opsOf(p.Backend().Timings().Snapshot())
			pl, err := p.Plan(caseRequest(t, c))
			if err != nil {
				t.Fatal(err)
			}
			if n := opsOf(p.Backend().Timings().Snapshot()) - before; n != 0 {
				t.Errorf("planning ran %d backend ops", n)
			}
			_, eshape := c.Floats(t, "dit0_encoder_hidden_states")
			_, hshape := c.Floats(t, "dit0_hidden_states")
			mask := c.Ints(t, "dit0_img_mask")
			L, pads := eshape[1], 0
			for _, m := range mask[:L] {
				pads += int(m)
			}
			h, w := c.Target()
			wantPrefix := L - pads + hshape[1] - h*w
			wantPrograms := 1
			if c.CFG > 1 {
				wantPrograms = 2
			}
			if pl.Width != 16*w || pl.Height != 16*h || pl.Programs != wantPrograms || pl.PrefixRows[0] != wantPrefix || pl.TargetRows != h*w {
				t.Errorf("plan %d×%d, %d programs, prefix %v, target %d; the reference: %d×%d, %d, %d, %d",
					pl.Width, pl.Height, pl.Programs, pl.PrefixRows, pl.TargetRows, 16*w, 16*h, wantPrograms, wantPrefix, h*w)
			}
			if len(pl.Memory.PrefixKV) != wantPrograms || pl.StepFlops <= 0 || pl.PrefillFlops <= 0 {
				t.Errorf("plan ledger %+v, flops %g/%g", pl.Memory, pl.PrefillFlops, pl.StepFlops)
			}
		})
	}
}

// smallDevice is a CPU backend that reports a 1 MB device budget.
type smallDevice struct{ *cpu.Backend }

func (smallDevice) DeviceBudget() int64 { return 1 << 20 }

// TestRunRefusesWhatDoesNotFit: a request whose cache and activations exceed the device budget is
// refused before any work, with ErrMemory and advice.
func TestRunRefusesWhatDoesNotFit(t *testing.T) {
	be := smallDevice{cpu.New()}
	p := newTinyPipeline(t, be)
	before := opsOf(be.Timings().Snapshot()) // binding the weights uploaded the small vectors
	_, err := p.Run(t.Context(), behaviourRequest(t, 0), nil)
	if !errors.Is(err, ErrMemory) || !strings.Contains(err.Error(), "smaller size") {
		t.Fatalf("error %v, want ErrMemory with advice", err)
	}
	if n := opsOf(be.Timings().Snapshot()) - before; n != 0 {
		t.Errorf("%d backend ops ran before the refusal", n)
	}
}
