package pipeline

import (
	"errors"
	"slices"
	"testing"
)

// batchRequest is a small request of the tiny model with a condition image, so the prefix the
// batch shares holds text and an image.
func batchRequest(cfg float64, withImage bool) Request {
	req := Request{Prompt: "a lighthouse on a cliff", NegativePrompt: "fog", Width: 64, Height: 64, Steps: 4, CFG: cfg, Seed: 7}
	if withImage {
		req.Images = append(req.Images, initTestImage())
	}
	return req
}

// runCollecting runs req and returns its result and every event.
func runCollecting(t *testing.T, p *Pipeline, req Request) (*Result, []Event) {
	t.Helper()
	events := make(chan Event, 1024)
	var got []Event
	done := make(chan struct{})
	go func() {
		for ev := range events {
			got = append(got, ev)
		}
		close(done)
	}()
	res, err := p.Run(t.Context(), req, events)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	return res, got
}

// checkBatchIsSingleRuns: a batch of n from seed 7 makes the images of seeds 7, 8, … bit for
// bit, prefills once, and its events say which image and seed each step belongs to.
func checkBatchIsSingleRuns(t *testing.T, p *Pipeline, cfg float64, withImage bool, n int) {
	req := batchRequest(cfg, withImage)
	req.Count = n
	res, events := runCollecting(t, p, req)
	if len(res.Batch) != n || res.Batch[0] != res {
		t.Fatalf("a batch of %d returned %d results", n, len(res.Batch))
	}
	prefills, finished := 0, 0
	steps := map[int]int{}
	for _, ev := range events {
		if ev.Images != n {
			t.Fatalf("event %+v: Images %d, want %d", ev.Stage, ev.Images, n)
		}
		if ev.Stage == StagePrefill && ev.Notice == "" {
			prefills++
		}
		if ev.Stage == StageDenoising && ev.Step > 0 {
			steps[ev.Image]++
			if ev.Seed != 7+uint64(ev.Image) {
				t.Errorf("image %d's step event carries seed %d", ev.Image, ev.Seed)
			}
		}
		if ev.Finished != nil {
			if ev.Finished != res.Batch[ev.Image] {
				t.Errorf("image %d's finished event carries another result", ev.Image)
			}
			finished++
		}
	}
	if prefills != 1 || finished != n || len(steps) != n {
		t.Errorf("events: %d prefills (want 1), %d finished (want %d), steps per image %v", prefills, finished, n, steps)
	}
	for i := range n {
		if steps[i] != 4 {
			t.Errorf("image %d: %d step events, want 4", i, steps[i])
		}
	}
	for i, got := range res.Batch {
		single := batchRequest(cfg, withImage)
		single.Seed = 7 + uint64(i)
		want, err := p.Run(t.Context(), single, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Seed != single.Seed || got.Index != i {
			t.Errorf("image %d: seed %d, index %d", i, got.Seed, got.Index)
		}
		if !slices.Equal(got.Latents, want.Latents) || !slices.Equal(got.Image.Pix, want.Image.Pix) {
			t.Errorf("CFG %g: image %d of the batch differs from the single run with seed %d", cfg, i, single.Seed)
		}
	}
}

// On the CPU: under CFG (both programs kept across the batch) with a condition image in the
// shared prefix.
func TestBatchIsSingleRuns(t *testing.T) {
	checkBatchIsSingleRuns(t, newTinyPipeline(t, nil), 3, true, 3)
}

// checkVariationEnds: variation strength 0 is the seed's own image and 1 the variation seed's,
// bit for bit; a batch of variations keeps the seed and counts the variation seeds up.
func checkVariationEnds(t *testing.T, p *Pipeline, withBatch bool) {
	base := initRequest(1)
	base.Steps = 3
	own, err := p.Run(t.Context(), base, nil)
	if err != nil {
		t.Fatal(err)
	}
	other := base
	other.Seed = 1234
	theirs, err := p.Run(t.Context(), other, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		strength float64
		want     *Result
	}{{0, own}, {1, theirs}} {
		req := base
		req.VariationSeed, req.VariationStrength = 1234, c.strength
		got, err := p.Run(t.Context(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Latents, c.want.Latents) || !slices.Equal(got.Image.Pix, c.want.Image.Pix) {
			t.Errorf("variation strength %g is not the expected image bit for bit", c.strength)
		}
	}
	if !withBatch {
		return
	}
	req := base
	req.VariationSeed, req.VariationStrength, req.Count = 1233, 0.2, 2
	res, err := p.Run(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res.Batch {
		if r.Seed != base.Seed || r.VariationSeed != 1233+uint64(i) || r.VariationStrength != 0.2 {
			t.Errorf("variation %d: seed %d, variation seed %d at %g", i, r.Seed, r.VariationSeed, r.VariationStrength)
		}
		if slices.Equal(r.Image.Pix, own.Image.Pix) || slices.Equal(r.Image.Pix, theirs.Image.Pix) {
			t.Errorf("variation %d at strength 0.2 is one of the two ends", i)
		}
	}
	if slices.Equal(res.Batch[0].Latents, res.Batch[1].Latents) {
		t.Error("two variations of a batch are the same")
	}
}

func TestVariationEnds(t *testing.T) { checkVariationEnds(t, newTinyPipeline(t, nil), true) }

// TestBatchWithAnInitImageIsSingleRuns: a batch of img2img passes (strength 0.5 of 8 steps: 4
// run) renoises the one encoded image with each image's noise.
func TestBatchWithAnInitImageIsSingleRuns(t *testing.T) {
	p := newTinyPipeline(t, nil)
	req := initRequest(1)
	req.Init = &InitImage{Image: initTestImage(), Strength: 0.5}
	req.Count = 2
	res, err := p.Run(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	one := req
	one.Count, one.Seed = 0, req.Seed+1
	want, err := p.Run(t.Context(), one, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Batch[1].Image.Pix, want.Image.Pix) || res.Batch[1].StepsRun != 4 {
		t.Errorf("image 2 of an img2img batch differs from the single run (steps run %d)", res.Batch[1].StepsRun)
	}
}

func TestBatchRefusesBadSettings(t *testing.T) {
	p := newTinyPipeline(t, nil)
	for _, mod := range []func(*Request){
		func(r *Request) { r.Count = MaxCount + 1 },
		func(r *Request) { r.Count = -1 },
		func(r *Request) { r.VariationStrength = 1.5 },
		func(r *Request) { r.Noise, r.Count = make([]float32, 16*64), 2 },
	} {
		req := initRequest(1)
		mod(&req)
		if _, err := p.Run(t.Context(), req, nil); err == nil || !(errors.Is(err, ErrSettings) || errors.Is(err, ErrNoise)) {
			t.Errorf("%+v: err %v", req.Count, err)
		}
	}
}
