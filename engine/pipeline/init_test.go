package pipeline

import (
	"errors"
	"image"
	"image/color"
	"slices"
	"testing"

	"easel/engine/sched"
)

// initTestImage is a 64×64 picture with some structure (a gradient and a disc), so its latents
// are not flat.
func initTestImage() *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, 64, 64))
	for y := range 64 {
		for x := range 64 {
			c := color.NRGBA{uint8(4 * x), uint8(4 * y), 128, 255}
			if (x-40)*(x-40)+(y-24)*(y-24) < 200 {
				c = color.NRGBA{240, 200, 30, 255}
			}
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}

// leftHalfMask repaints the left 32 columns of a 64×64 image (latent columns 0 and 1).
func leftHalfMask() *image.Gray {
	m := image.NewGray(image.Rect(0, 0, 64, 64))
	for y := range 64 {
		for x := range 32 {
			m.Pix[y*m.Stride+x] = 255
		}
	}
	return m
}

// initRequest is a small text-to-image request of the tiny model the init tests build on.
func initRequest(cfg float64) Request {
	return Request{Prompt: "a lighthouse on a cliff", NegativePrompt: "fog", Width: 64, Height: 64, Steps: 8, CFG: cfg, Seed: 42}
}

// checkStrengthOneIsTextToImage: strength 1 starts from the seed's noise (σ₀ = 1), so the
// picture is the text-to-image one bit for bit, under CFG too.
func checkStrengthOneIsTextToImage(t *testing.T, p *Pipeline) {
	for _, cfg := range []float64{1, 3} {
		req := initRequest(cfg)
		t2i, err := p.Run(t.Context(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Init = &InitImage{Image: initTestImage(), Strength: 1}
		i2i, err := p.Run(t.Context(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(t2i.Latents, i2i.Latents) || !slices.Equal(t2i.Image.Pix, i2i.Image.Pix) {
			t.Errorf("CFG %g: strength 1 differs from text-to-image of the same seed", cfg)
		}
		if i2i.StepsRun != req.Steps || i2i.Steps != req.Steps {
			t.Errorf("CFG %g: strength 1 ran %d of %d steps, want all %d", cfg, i2i.StepsRun, i2i.Steps, req.Steps)
		}
	}
}

func TestInitStrengthOneIsTextToImage(t *testing.T) {
	checkStrengthOneIsTextToImage(t, newTinyPipeline(t, nil))
}

// TestInitStrengthSkipsSteps: strength 0.5 of 8 steps runs the last 4 of the 8-step schedule,
// and the events count those 4.
func TestInitStrengthSkipsSteps(t *testing.T) {
	p := newTinyPipeline(t, nil)
	req := initRequest(1)
	full, err := p.Schedule(req.Steps, nil, 16)
	if err != nil {
		t.Fatal(err)
	}
	req.Init = &InitImage{Image: initTestImage(), Strength: 0.5}
	events := make(chan Event, 1000)
	res, err := p.Run(t.Context(), req, events)
	if err != nil {
		t.Fatal(err)
	}
	var steps []int
	for ev := range events {
		if ev.Stage == StageDenoising && ev.Step > 0 {
			steps = append(steps, ev.Step)
			if ev.Steps != 4 {
				t.Errorf("step event %d says %d steps, want 4", ev.Step, ev.Steps)
			}
			if want := full.Sigmas[4+ev.Step-1]; ev.Sigma != want {
				t.Errorf("step event %d started from σ %v, want the full schedule's σ_%d = %v", ev.Step, ev.Sigma, 4+ev.Step-1, want)
			}
		}
	}
	if !slices.Equal(steps, []int{1, 2, 3, 4}) {
		t.Errorf("step events %v, want 1…4", steps)
	}
	if res.Steps != 8 || res.StepsRun != 4 || res.Strength != 0.5 || !slices.Equal(res.Sigmas, full.Sigmas[4:]) {
		t.Errorf("result: %d steps, %d run, strength %g, σ %v; want 8, 4, 0.5, %v", res.Steps, res.StepsRun, res.Strength, res.Sigmas, full.Sigmas[4:])
	}
}

// TestInitRefusesBadInput: every bad init image fails before any work, with the kind of error
// the caller maps to its exit code.
func TestInitRefusesBadInput(t *testing.T) {
	p := newTinyPipeline(t, nil)
	black := image.NewGray(image.Rect(0, 0, 64, 64))
	small := image.NewGray(image.Rect(0, 0, 32, 32))
	for _, c := range []struct {
		name string
		init InitImage
		want error
	}{
		{"strength 0", InitImage{Image: initTestImage(), Strength: 0}, ErrSettings},
		{"strength above 1", InitImage{Image: initTestImage(), Strength: 1.2}, ErrSettings},
		{"no step left", InitImage{Image: initTestImage(), Strength: 1e-17}, ErrSettings},
		{"black mask", InitImage{Image: initTestImage(), Strength: 1, Mask: black}, ErrSettings},
		{"mask of another size", InitImage{Image: initTestImage(), Strength: 1, Mask: small}, ErrSize},
		{"no image", InitImage{Strength: 1}, ErrImages},
	} {
		req := initRequest(1)
		req.Init = &c.init
		if _, err := p.Plan(req); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want an error wrapping %v", c.name, err, c.want)
		}
	}
	req := initRequest(1)
	req.Width, req.Height = 96, 64
	req.Init = &InitImage{Image: initTestImage(), Strength: 0.6}
	if _, err := p.Plan(req); !errors.Is(err, ErrSize) {
		t.Errorf("an init image of another size than the output: %v, want ErrSize", err)
	}
	req = initRequest(1)
	req.Width, req.Height = 0, 0
	req.Init = &InitImage{Image: initTestImage(), Strength: 0.6}
	if pl, err := p.Plan(req); err != nil || pl.Width != 64 || pl.Height != 64 {
		t.Errorf("without a size the output should follow the init image: %+v, %v", pl, err)
	}
}

// TestLatentMask: a token takes the strongest pixel of its 16×16 cell.
func TestLatentMask(t *testing.T) {
	m := image.NewGray(image.Rect(0, 0, 64, 32))
	m.Pix[5*m.Stride+20] = 128  // token (0, 1)
	m.Pix[20*m.Stride+63] = 255 // token (1, 3)
	m.Pix[21*m.Stride+62] = 10  // token (1, 3), weaker
	got, err := LatentMask(m, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{0, 128.0 / 255, 0, 0, 0, 0, 0, 1}
	if !slices.Equal(got, want) {
		t.Errorf("LatentMask = %v, want %v", got, want)
	}
	if _, err := LatentMask(m, 4, 4); err == nil {
		t.Error("a 64×32 mask for a 4×4 grid did not fail")
	}
}

// blendRun denoises initTestImage under mask with the tiny model's stages, returning the clean
// latents, the noise, the schedule walked and the latents after every step.
func blendRun(t *testing.T, p *Pipeline, mask *image.Gray, strength float64) (x0, noise []float32, s sched.Schedule, steps [][]float32) {
	t.Helper()
	const h, w = 4, 4
	prompt, err := p.BuildPrompt("a lighthouse on a cliff", nil)
	if err != nil {
		t.Fatal(err)
	}
	pos, err := p.EncodePrompt(t.Context(), prompt.IDs, prompt.Drop, nil)
	if err != nil {
		t.Fatal(err)
	}
	if x0, err = p.encodeInit(t.Context(), initTestImage(), h, w); err != nil {
		t.Fatal(err)
	}
	if noise, err = p.Noise(42, h, w); err != nil {
		t.Fatal(err)
	}
	full, err := p.Schedule(8, nil, h*w)
	if err != nil {
		t.Fatal(err)
	}
	start, err := sched.StartStep(8, strength)
	if err != nil {
		t.Fatal(err)
	}
	if s, err = full.From(start); err != nil {
		t.Fatal(err)
	}
	lm, err := LatentMask(mask, h, w)
	if err != nil {
		t.Fatal(err)
	}
	in := DenoiseInput{Positive: pos, CFG: 1, H: h, W: w, Noise: noise, Schedule: s, Init: &DenoiseInit{Latents: x0, Mask: lm}}
	_, err = p.Denoise(t.Context(), in, DenoiseHooks{Step: func(r StepReport) {
		if r.Steps != s.Steps() {
			t.Errorf("step report %d says %d steps, want %d", r.Index, r.Steps, s.Steps())
		}
		steps = append(steps, slices.Clone(r.Latents))
	}})
	if err != nil {
		t.Fatal(err)
	}
	return x0, noise, s, steps
}

// TestInpaintBlendKeepsOutsideTheMask is the blend's unit test: with a binary mask, after every
// step the latents of the kept tokens are the original re-noised to the next σ with the run's
// noise, and the clean original after the last step; the repainted tokens differ from it.
func TestInpaintBlendKeepsOutsideTheMask(t *testing.T) {
	p := newTinyPipeline(t, nil)
	x0, noise, s, steps := blendRun(t, p, leftHalfMask(), 0.75)
	if len(steps) != 6 {
		t.Fatalf("%d steps run, want 6 of 8 at strength 0.75", len(steps))
	}
	const ch = 64
	want := make([]float32, len(x0))
	for i, x := range steps {
		if err := sched.Renoise(want, x0, noise, s.Sigmas[i+1]); err != nil {
			t.Fatal(err)
		}
		changed := false
		for tok := range 16 {
			got, exp := x[tok*ch:(tok+1)*ch], want[tok*ch:(tok+1)*ch]
			if tok%4 >= 2 { // kept
				if !slices.Equal(got, exp) {
					t.Errorf("step %d, kept token %d: not the original re-noised to σ %v", i+1, tok, s.Sigmas[i+1])
				}
			} else if !slices.Equal(got, exp) {
				changed = true
			}
		}
		if !changed {
			t.Errorf("step %d: the repainted tokens are the re-noised original too", i+1)
		}
	}
	last := steps[len(steps)-1]
	for tok := range 16 {
		if tok%4 >= 2 && !slices.Equal(last[tok*ch:(tok+1)*ch], x0[tok*ch:(tok+1)*ch]) {
			t.Errorf("after the last step, kept token %d is not the clean original", tok)
		}
	}
}

// TestInpaintSoftMaskJoinsLate: a token of mask value m keeps the re-noised original until the
// schedule has fallen to m of its start, then denoises (Differential Diffusion).
func TestInpaintSoftMaskJoinsLate(t *testing.T) {
	p := newTinyPipeline(t, nil)
	mask := image.NewGray(image.Rect(0, 0, 64, 64))
	for y := range 64 {
		for x := range 64 {
			switch {
			case x < 16:
				mask.Pix[y*mask.Stride+x] = 255
			case x < 32:
				mask.Pix[y*mask.Stride+x] = 102 // 0.4
			}
		}
	}
	x0, noise, s, steps := blendRun(t, p, mask, 1)
	const ch = 64
	want := make([]float32, len(x0))
	joined := -1
	for i, x := range steps {
		if err := sched.Renoise(want, x0, noise, s.Sigmas[i+1]); err != nil {
			t.Fatal(err)
		}
		tok := 1 // column 1: m = 0.4
		kept := slices.Equal(x[tok*ch:(tok+1)*ch], want[tok*ch:(tok+1)*ch])
		level := s.Sigmas[i+1]
		if level == 0 {
			level = s.Sigmas[i]
		}
		shouldKeep := !(float32(102.0/255)*s.Sigmas[0] >= level)
		if kept != shouldKeep {
			t.Errorf("step %d (next σ %v): the m = 0.4 token kept %v, want %v", i+1, s.Sigmas[i+1], kept, shouldKeep)
		}
		if !kept && joined < 0 {
			joined = i
		}
	}
	if joined <= 0 || joined >= len(steps)-1 {
		t.Errorf("the m = 0.4 column joined at step %d of %d; want in the middle of the run", joined+1, len(steps))
	}
}
