package pipeline

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"easel/engine/ml"
	"easel/engine/ml/cpu"
	"easel/engine/quant"
)

// TestRunDeterministic: the same request twice gives the same bytes (image and latents).
func TestRunDeterministic(t *testing.T) {
	p := newTinyPipeline(t, nil)
	req := behaviourRequest(t, 2)
	a, err := p.Run(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Run(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Image.Pix, b.Image.Pix) {
		t.Error("two runs of the same request gave different image bytes")
	}
	if !slices.Equal(a.Latents, b.Latents) {
		t.Error("two runs of the same request gave different latents")
	}
}

// TestRunEventsNeverBlock runs with an unbuffered events channel that nobody reads until Run
// has returned: Run must not wait for the consumer. Draining afterwards must then give every
// stage and every step in order (progress is never dropped), one surviving preview (the newest:
// older ones still queued were dropped) rendered by the preview hook, and a closed channel.
func TestRunEventsNeverBlock(t *testing.T) {
	p := newTinyPipeline(t, nil)
	req := behaviourRequest(t, 0)
	h, w := req.Height/16, req.Width/16
	var rendered [][2]int
	req.Preview = func(x0 []float32, ph, pw int) image.Image {
		rendered = append(rendered, [2]int{ph, pw})
		if len(x0) != ph*pw*64 {
			t.Errorf("preview of %d values for a %d×%d grid", len(x0), ph, pw)
		}
		return image.NewNRGBA(image.Rect(0, 0, pw, ph))
	}
	events := make(chan Event)
	res, err := p.Run(t.Context(), req, events)
	if err != nil {
		t.Fatal(err)
	}
	var got []Event
	for ev := range events {
		got = append(got, ev)
	}
	var stages []Stage
	var steps []int
	var previews []*Preview
	for _, ev := range got {
		if len(stages) == 0 || stages[len(stages)-1] != ev.Stage {
			stages = append(stages, ev.Stage)
		}
		if ev.Step > 0 {
			steps = append(steps, ev.Step)
			if ev.LastStepTime <= 0 || ev.StepTime <= 0 || ev.ETA <= 0 {
				t.Errorf("step %d event: last step %v, mean %v, ETA %v; want all measured", ev.Step, ev.LastStepTime, ev.StepTime, ev.ETA)
			}
			if ev.Steps != req.Steps || ev.Sigma != res.Sigmas[ev.Step-1] {
				t.Errorf("step %d event: %d steps, σ %v; want %d, %v", ev.Step, ev.Steps, ev.Sigma, req.Steps, res.Sigmas[ev.Step-1])
			}
		}
		if ev.Preview != nil {
			previews = append(previews, ev.Preview)
		}
	}
	wantStages := []Stage{StageEncodingPrompt, StagePrefill, StageDenoising, StageDecoding, StageDone}
	if !slices.Equal(stages, wantStages) {
		t.Errorf("stages %v, want %v", stages, wantStages)
	}
	var want []int
	for i := range req.Steps {
		want = append(want, i+1)
	}
	if !slices.Equal(steps, want) {
		t.Errorf("step events %v, want %v", steps, want)
	}
	if len(previews) != 1 || len(rendered) != 1 || rendered[0] != [2]int{h, w} || previews[0].Image == nil {
		t.Fatalf("%d previews delivered, %d rendered (%v): want the newest one only, %d×%d", len(previews), len(rendered), rendered, h, w)
	}
	// The last step goes from σ to 0, so its x0 estimate is the final latents, to the bit.
	if !slices.Equal(previews[0].X0, res.Latents) {
		t.Error("the last step's x0 preview is not the final latents")
	}
	last := got[len(got)-1]
	m := last.Memory
	names := map[string]bool{}
	for _, cb := range m.Weights {
		names[cb.Name] = cb.Bytes > 0
	}
	if !names["dit"] || !names["te"] || !names["vis"] || !names["vae"] {
		t.Errorf("weights ledger %v: want dit, te, vis and vae", m.Weights)
	}
	if len(res.Memory.PrefixKV) != 2 || res.Memory.PrefixKV[0] <= 0 || res.Memory.Activations <= 0 {
		t.Errorf("denoising ledger: prefix K/V %v, activations %d; want two programs and an estimate", res.Memory.PrefixKV, res.Memory.Activations)
	}
	if m.DeviceBudget <= 0 || m.PeakRSS <= 0 || m.GoHeap <= 0 {
		t.Errorf("ledger: device budget %d, peak RSS %d, Go heap %d; want all known on Linux", m.DeviceBudget, m.PeakRSS, m.GoHeap)
	}
	if last.Timings[ml.ClassGemm].Ops == 0 || last.Timings[ml.ClassAttn].Ops == 0 {
		t.Errorf("per-class timings %v: no GEMM or attention ops counted", last.Timings)
	}
}

// cancelAt is a CPU backend that cancels the run's context during its k-th call of one op (the
// op itself completes, as an op in flight does) and snapshots the op counts right then.
type cancelAt struct {
	*cpu.Backend
	mu      sync.Mutex
	op      string // "linear" or "conv"
	k       int
	counts  map[string]int
	cancel  context.CancelFunc
	atPause [ml.NumClasses]ml.ClassTime
}

func (c *cancelAt) count(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts[op]++; op == c.op && c.counts[op] == c.k && c.cancel != nil {
		c.cancel()
		c.atPause = c.Timings().Snapshot()
	}
}

func (c *cancelAt) Linear(dst, x ml.Tensor, w *quant.Tensor) error {
	defer c.count("linear")
	return c.Backend.Linear(dst, x, w)
}

func (c *cancelAt) LinearBatch(dst []ml.Tensor, x ml.Tensor, w []*quant.Tensor) error {
	defer c.count("linear")
	return c.Backend.LinearBatch(dst, x, w)
}

func (c *cancelAt) Conv2D(dst, x ml.Tensor, w *quant.Tensor, bias ml.Tensor, spec ml.ConvSpec) error {
	defer c.count("conv")
	return c.Backend.Conv2D(dst, x, w, bias, spec)
}

func opsOf(s [ml.NumClasses]ml.ClassTime) int {
	n := 0
	for _, c := range s {
		n += c.Ops
	}
	return n
}

// TestRunCancel cancels a CFG run with condition images in each stage: Run returns an error that
// is context.Canceled and names the stage, no backend op starts after the cancel, and the same
// pipeline then runs the request to the uncancelled run's image, bit for bit (the two programs
// were released, or the next prefill would be refused).
func TestRunCancel(t *testing.T) {
	req := behaviourRequest(t, 2)
	be := &cancelAt{Backend: cpu.New(), counts: map[string]int{}}
	p := newTinyPipeline(t, be)
	// Count a whole run's linear layers and convolutions first.
	first, err := p.Run(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	linears, convs := be.counts["linear"], be.counts["conv"]
	// Linear layers run in the text encoder, then the denoiser (prefill, then the steps);
	// convolutions in the VAE encoder, then the decoder.
	for _, tc := range []struct {
		op    string
		k     int
		stage string
	}{
		{"linear", 2, "encoding prompt"},
		{"conv", 3, "encoding images"},
		{"linear", linears - 1, fmt.Sprintf("denoising (step %d of %d)", req.Steps, req.Steps)},
		{"conv", convs - 1, "decoding"},
	} {
		ctx, cancel := context.WithCancel(t.Context())
		be.mu.Lock()
		be.op, be.k, be.cancel, be.counts = tc.op, tc.k, cancel, map[string]int{}
		be.mu.Unlock()
		_, err := p.Run(ctx, req, nil)
		cancel()
		after := be.Timings().Snapshot()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled at %s %d: error %v, want context.Canceled", tc.op, tc.k, err)
		}
		if want := "pipeline: cancelled while " + tc.stage + ": "; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("cancelled at %s %d: %q, want it to start %q", tc.op, tc.k, err, want)
		}
		if n := opsOf(after) - opsOf(be.atPause); n != 0 {
			t.Errorf("cancelled at %s %d: %d ops ran after the cancel", tc.op, tc.k, n)
		}
		t.Logf("cancelled at %s %d of %d/%d: %v", tc.op, tc.k, linears, convs, err)
	}
	be.mu.Lock()
	be.cancel = nil
	be.mu.Unlock()
	res, err := p.Run(t.Context(), req, nil)
	if err != nil {
		t.Fatalf("after cancelled runs: %v", err)
	}
	if !slices.Equal(res.Image.Pix, first.Image.Pix) || !slices.Equal(res.Latents, first.Latents) {
		t.Errorf("after cancelled runs: the image or the latents differ from the uncancelled run's (image max |Δ| %.3g)",
			maxAbs(t, "image", imageHWC(res.Decoded), imageHWC(first.Decoded)))
	}
}

// TestRunBadRequests: each impossible request fails before any work with its kind of error.
func TestRunBadRequests(t *testing.T) {
	p := newTinyPipeline(t, nil)
	img := image.NewNRGBA(image.Rect(0, 0, 64, 64))
	for _, tc := range []struct {
		name string
		req  Request
		kind error
	}{
		{"eleven images", Request{Images: slices.Repeat([]*image.NRGBA{img}, 11)}, ErrImages},
		{"empty image", Request{Images: []*image.NRGBA{image.NewNRGBA(image.Rect(0, 0, 0, 0))}}, ErrImages},
		{"too small", Request{Width: 31, Height: 512}, ErrSize},
		{"width only", Request{Width: 512}, ErrSize},
		{"too large", Request{Width: 8192, Height: 512}, ErrSize},
		{"extreme aspect", Request{Aspect: 1000, Resolution: 128}, ErrSize},
		{"negative aspect", Request{Aspect: -1}, ErrSize},
		{"negative steps", Request{Steps: -3}, ErrSettings},
		{"NaN CFG", Request{CFG: math.NaN()}, ErrSettings},
		{"steps and sigmas", Request{Steps: 3, Sigmas: []float64{1, 0.5}}, ErrSettings},
		{"short noise", Request{Width: 64, Height: 64, Noise: make([]float32, 10)}, ErrNoise},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := opsOf(p.Backend().Timings().Snapshot())
			_, err := p.Run(t.Context(), tc.req, nil)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("error %v, want %v", err, tc.kind)
			}
			if n := opsOf(p.Backend().Timings().Snapshot()) - before; n != 0 {
				t.Errorf("%d backend ops ran before the request was refused", n)
			}
			t.Log(err)
		})
	}
	// With the stock processor (min_pixels 65536) a condition image sized for resolution 96 is
	// enlarged for the vision tower but not for the VAE: refused before any work.
	stock := newStockProcessorPipeline(t)
	before := opsOf(stock.Backend().Timings().Snapshot())
	if _, err := stock.Run(t.Context(), Request{Images: []*image.NRGBA{img}, Resolution: 96}, nil); !errors.Is(err, ErrImages) || !strings.Contains(err.Error(), "vision tower") {
		t.Errorf("condition image below the processor's min_pixels: %v", err)
	} else if n := opsOf(stock.Backend().Timings().Snapshot()) - before; n != 0 {
		t.Errorf("%d backend ops ran before the request was refused", n)
	}
	for _, s := range []string{"16:9", "4x3", "1.5", " 2 : 3 "} {
		if _, err := ParseAspect(s); err != nil {
			t.Errorf("ParseAspect(%q): %v", s, err)
		}
	}
	for _, s := range []string{"", "16:", "0:1", "a:b", "-1", "inf"} {
		if _, err := ParseAspect(s); !errors.Is(err, ErrSize) {
			t.Errorf("ParseAspect(%q) = %v, want ErrSize", s, err)
		}
	}
}

// TestRunEmptyPrompt: an empty prompt is allowed (it is encoded as a single space) and the model
// defaults fill every unset setting but the size.
func TestRunEmptyPrompt(t *testing.T) {
	p := newTinyPipeline(t, nil)
	res, err := p.Run(t.Context(), Request{Width: 32, Height: 64, Steps: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b := res.Image.Bounds(); b.Dx() != 32 || b.Dy() != 64 || res.CFG != p.Defaults().CFG {
		t.Errorf("image %v, CFG %g; want 32×64 and the default CFG %g", b, res.CFG, p.Defaults().CFG)
	}
}

// panicky is a CPU backend whose attention panics while armed, standing in for a bug in a
// network or backend.
type panicky struct {
	*cpu.Backend
	armed bool
}

func (p *panicky) Attention(dst, q, k, v, prefixK, prefixV ml.Tensor, spec ml.AttnSpec) error {
	if p.armed {
		panic("index out of range in a test backend")
	}
	return p.Backend.Attention(dst, q, k, v, prefixK, prefixV, spec)
}

// TestRunSurvivesAPanic: a panic below the pipeline fails that run with an error naming the stage
// (it does not take the app down), and the pipeline still works afterwards.
func TestRunSurvivesAPanic(t *testing.T) {
	be := &panicky{Backend: cpu.New()}
	p := newTinyPipeline(t, be)
	req := behaviourRequest(t, 0)
	be.armed = true
	_, err := p.Run(t.Context(), req, nil)
	if err == nil || !strings.Contains(err.Error(), "internal error") || !strings.Contains(err.Error(), "encoding prompt") {
		t.Fatalf("error %v, want an internal error in the encoding stage", err)
	}
	be.armed = false
	if _, err := p.Run(t.Context(), req, nil); err != nil {
		t.Fatalf("after the panic: %v", err)
	}
}
