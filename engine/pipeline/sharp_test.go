package pipeline

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"easel/engine/vae"
)

// Averaging tokens over f×f blocks: whole blocks and the partial ones at the edges.
func TestDownsampleTokens(t *testing.T) {
	// A 3×5 grid of 2-channel tokens: channel 0 is the token's index, channel 1 is 1.
	x := make([]float32, 3*5*2)
	for i := range 15 {
		x[2*i], x[2*i+1] = float32(i), 1
	}
	got := downsampleTokens(x, 3, 5, 2)
	// Blocks: rows {0,1} × cols {0,1}, {2,3}, {4}; row {2} × the same.
	want := []float32{(0 + 1 + 5 + 6) / 4.0, 1, (2 + 3 + 7 + 8) / 4.0, 1, (4 + 9) / 2.0, 1, (10 + 11) / 2.0, 1, (12 + 13) / 2.0, 1, 14, 1}
	if len(got) != len(want) {
		t.Fatalf("%d values, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("value %d = %g, want %g (all: %v)", i, got[i], want[i], got)
		}
	}
	if f := sharpDownsample(64, 64); f != 4 {
		t.Errorf("1024² decodes at 1/%d, want 1/4", f)
	}
	if f := sharpDownsample(4, 6); f != 1 {
		t.Errorf("a 4×6 grid decodes at 1/%d, want full size", f)
	}
}

// The sharp decoder decodes what it is offered through the real VAE (the same pixels as the
// pipeline's decoder on the reduced latents), a newer step supersedes an older one, and k follows
// the measured decode and step times.
func TestSharpDecoderDecodesTheLatestStep(t *testing.T) {
	p := newTinyPipeline(t, nil)
	m, guard, err := p.sharpModel()
	if err != nil {
		t.Fatal(err)
	}
	const h, w = 8, 12 // ×2 → 4×6 latents → 64×96 pixels
	d := newSharpDecoder(m, guard, h, w)
	defer d.close()
	settled := make(chan int, 8)
	d.mu.Lock()
	d.settled = func(step int) { settled <- step }
	d.mu.Unlock()

	r := rand.New(rand.NewPCG(5, 5))
	x0 := func() []float32 {
		v := make([]float32, h*w*64)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	first, second := x0(), x0()
	<-d.probed
	if s := d.stats; s.Time <= 0 || d.estimate <= 0 {
		t.Fatalf("after the probes: %+v, first decode expected to take %g s", s, d.estimate)
	}
	d.offer(1, first, time.Hour)
	d.offer(2, second, time.Hour) // supersedes step 1, running or waiting
	for step := range settled {
		if step == 2 {
			break
		}
	}
	img, stats := d.take()
	if img == nil || img.Step != 2 || img.Downsample != 2 {
		t.Fatalf("ready image %+v, want step 2 at 1/2", img)
	}
	if b := img.Image.Bounds(); b.Dx() != 16*w/2 || b.Dy() != 16*h/2 {
		t.Fatalf("sharp preview is %v, want %d×%d", b, 16*w/2, 16*h/2)
	}
	if stats.Decodes+stats.Superseded != 2 || stats.Decodes < 1 || stats.Last <= 0 {
		t.Errorf("stats %+v after two offers", stats)
	}
	t.Logf("the probes expected a decode of %v; it took %v", time.Duration(d.estimate*float64(time.Second)), stats.Last)
	zn, err := vae.FromTokens(downsampleTokens(second, h, w, 2), h/2, w/2)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := p.vae.Decode(context.Background(), zn)
	if err != nil {
		t.Fatal(err)
	}
	want, err := vae.ToRGBA(ref)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.Pix {
		if img.Image.Pix[i] != want.Pix[i] {
			t.Fatalf("byte %d of the sharp preview is %d, the pipeline's decode %d", i, img.Image.Pix[i], want.Pix[i])
		}
	}

	// A step as long as one decode: k = 1/SharpBudget = 20, and the budget spent on the decodes
	// so far keeps step 3 from being decoded.
	d.offer(3, x0(), stats.Last)
	d.mu.Lock()
	pending, every := d.pending, d.stats.Every
	d.mu.Unlock()
	if every != 20 || pending != nil {
		t.Errorf("after a decode as long as a step: every %d steps, pending %v; want 20 and nothing queued", every, pending)
	}
	if img, _ := d.take(); img != nil {
		t.Errorf("image %+v handed out twice", img)
	}
}

// A run with the sharp preview reports its costs on every step event and makes the same image as
// a run without it.
func TestRunWithSharpPreview(t *testing.T) {
	p := newTinyPipeline(t, nil)
	req := Request{Prompt: "a lighthouse", Width: 128, Height: 192, Steps: 3, Seed: 3}
	plain, err := p.Run(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SharpPreview = true
	events := make(chan Event, 64)
	res, err := p.Run(context.Background(), req, events)
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	for ev := range events {
		if ev.Stage == StageDenoising && ev.Step > 0 {
			steps++
			if ev.Sharp == nil || ev.Sharp.Downsample != 2 || ev.Sharp.Every < 1 {
				t.Errorf("step %d: sharp stats %+v", ev.Step, ev.Sharp)
			}
			if ev.Preview != nil && ev.Preview.Sharp != nil {
				if s := ev.Preview.Sharp; s.Step >= ev.Step || s.Image.Bounds().Dx() != 64 {
					t.Errorf("step %d carries a sharp preview of step %d, %v", ev.Step, s.Step, s.Image.Bounds())
				}
			}
		}
	}
	if steps != 3 {
		t.Errorf("%d step events, want 3", steps)
	}
	for i := range plain.Image.Pix {
		if plain.Image.Pix[i] != res.Image.Pix[i] {
			t.Fatalf("byte %d differs with the sharp preview on", i)
		}
	}
}
