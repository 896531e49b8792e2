package studiogen

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"image"
	"image/png"
	"testing"
	"time"

	"easel/app"
	"easel/app/activity"
	"easel/app/jobs"
	"easel/app/studio"
	"easel/engine/pipeline"
)

const lendToken = "lend-test-token-0123456789abcdef"

// seededGen stands for the window's renderer: its 16×16 picture is a hash of everything in the
// request that decides the pixels, so a request changed on the way renders differently. hold,
// when set, is called once the run has started and may block (it gets the run's ctx).
func seededGen(hold func(ctx context.Context, req pipeline.Request) error) jobs.Generator {
	return jobs.GeneratorFunc(func(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
		defer close(events)
		steps := max(req.Steps, 1)
		events <- pipeline.Event{Stage: pipeline.StageDenoising, Step: 1, Steps: steps}
		if hold != nil {
			if err := hold(ctx, req); err != nil {
				return nil, err
			}
		}
		key, _ := json.Marshal([]any{req.Prompt, req.NegativePrompt, req.Seed, req.VariationSeed, req.VariationStrength, req.Steps, req.CFG, req.Width, req.Height})
		h := sha256.Sum256(key)
		img := image.NewNRGBA(image.Rect(0, 0, 16, 16))
		for i := range img.Pix {
			img.Pix[i] = h[i%len(h)] ^ byte(i)
		}
		for s := 2; s <= steps; s++ {
			events <- pipeline.Event{Stage: pipeline.StageDenoising, Step: s, Steps: steps}
		}
		return &pipeline.Result{Image: img, Width: 16, Height: 16, Steps: steps, CFG: req.CFG, Seed: req.Seed, VariationSeed: req.VariationSeed}, nil
	})
}

func startLendHub(t *testing.T) *studio.Hub {
	h, err := studio.StartHub(studio.HubConfig{Listen: "127.0.0.1:0", Token: lendToken, Data: t.TempDir(), AckWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

func dialLend(t *testing.T, h *studio.Hub, role studio.Role) *studio.Conn {
	c, err := studio.Dial(context.Background(), h.URL(), studio.DialOptions{Role: role, Token: lendToken, Name: string(role)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// waitWorkers waits (bounded) until n workers' statuses are on the hub.
func waitWorkers(t *testing.T, c *studio.Conn, n int) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		ws, _ := c.Workers(context.Background())
		if len(ws) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d workers on the hub, want %d", len(ws), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A lent Mac renders a window's batch of 2 sent through the studio generator with its own
// renderer, each image's pixels those of a local run of the same request, and steps only when
// Ready lets it (its own queue idle).
func TestLentMacRendersBatchAsLocal(t *testing.T) {
	h := startLendHub(t)
	gen := seededGen(nil)
	ready := make(chan struct{})
	readyAsked := make(chan struct{}, 1)
	l := &Lend{Name: "studio-mac", Model: "/models/tiny.cmf", ModelHash: "fp-tiny", Backend: "cpu", Gen: gen,
		Ready: func(ctx context.Context) error {
			select {
			case readyAsked <- struct{}{}:
			default:
			}
			select {
			case <-ready:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx, dialLend(t, h, studio.RoleWorker)) }()
	<-readyAsked // the worker waits for the window's queue before pulling anything
	close(ready)

	g, err := New(h.URL(), lendToken, "", "fp-tiny", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	waitWorkers(t, g.Conn(), 1)
	req := pipeline.Request{Prompt: "a lighthouse", Steps: 3, CFG: 1, Seed: 41, Count: 2}
	rctx, rcancel := context.WithTimeout(context.Background(), time.Minute)
	defer rcancel()
	res, err := g.Run(rctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Batch) != 2 {
		t.Fatalf("%d images back, want 2", len(res.Batch))
	}
	for i, r := range res.Batch {
		one := req
		one.Count = 0
		one.Seed, one.VariationSeed = req.ImageSeeds(i)
		local, err := gen.Run(context.Background(), one, make(chan pipeline.Event, 8))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(NRGBA(r.Image).Pix, local.Image.Pix) {
			t.Errorf("image %d (seed %d): the lent Mac's pixels differ from a local render", i+1, one.Seed)
		}
		if r.Seed != one.Seed {
			t.Errorf("image %d: seed %d, want %d", i+1, r.Seed, one.Seed)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}

// The Mac about to sleep (activity.WillSleep) hands the job in hand back at once: the client
// hears the hand-back, and while the Mac sleeps the image waits in the queue. After the wake
// (activity.DidWake) the lent Mac is still in the studio and renders it, as attempt 2. (The sleep
// is the whole process's, so another Mac cannot be shown here: the CLI studio tests have
// redelivery to other worker processes.)
func TestLentMacHandsBackWhenSleeping(t *testing.T) {
	t.Cleanup(activity.DidWake)
	h := startLendHub(t)
	started := make(chan struct{})
	var first bool
	l := &Lend{Name: "lent", Model: "tiny.cmf", ModelHash: "fp-tiny", Backend: "cpu",
		Gen: seededGen(func(ctx context.Context, _ pipeline.Request) error {
			if first {
				return nil
			}
			first = true
			close(started)
			<-ctx.Done()
			return ctx.Err()
		})}
	lctx, lcancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(lctx, dialLend(t, h, studio.RoleWorker)) }()
	defer func() {
		lcancel()
		if err := <-done; err != nil {
			t.Errorf("the lent Mac: %v", err)
		}
	}()
	client := dialLend(t, h, studio.RoleClient)
	waitWorkers(t, client, 1)

	fp := studio.Fingerprint{Easel: app.Version, Model: "fp-tiny", Kind: studio.KindPipeline}
	data, _ := json.Marshal(map[string]any{"pipeline": PipelineRequest{Prompt: "p", Steps: 2, Seed: 7}})
	job := &studio.Job{Batch: studio.NewBatchID(), Index: 0, Images: 1, Fingerprint: fp, Request: data}
	rctx, rcancel := context.WithTimeout(context.Background(), time.Minute)
	defer rcancel()
	asleep := make(chan *studio.Status, 1)
	go func() {
		<-started
		activity.WillSleep() // returns once the job is back in the queue
		// The worker's status reaches the hub a moment later (published apart from the Nak).
		var st *studio.Status
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if s, err := client.Status(rctx); err == nil && len(s.Workers) == 1 && s.Workers[0].State == studio.StateIdle {
				st = s
				break
			}
		}
		asleep <- st
		activity.DidWake()
	}()
	var handedBack bool
	var result studio.Event
	err := client.Run(rctx, []*studio.Job{job}, func(e studio.Event) {
		switch e.Kind {
		case studio.EventHandedBack:
			handedBack = true
		case studio.EventResult:
			result = e
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !handedBack {
		t.Error("the client never heard the hand-back")
	}
	if st := <-asleep; st == nil || st.Queued != 1 || len(st.Workers) != 1 || st.Workers[0].State != studio.StateIdle {
		t.Errorf("while the Mac slept the studio was %+v; want the image queued and the lent Mac idle", st)
	}
	if result.Worker != "lent" || result.Attempt != 2 {
		t.Errorf("the image came from %q at attempt %d, want lent (after its wake) at attempt 2", result.Worker, result.Attempt)
	}
	if _, err := png.Decode(bytes.NewReader(result.PNG)); err != nil {
		t.Errorf("the result is not a PNG: %v", err)
	}
}
