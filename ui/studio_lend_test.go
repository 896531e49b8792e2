package ui

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"image"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"easel/app"
	"easel/app/jobs"
	macs "easel/app/studio"
	"easel/app/studiogen"
	"easel/engine/pipeline"
	"easel/ui/remote"
)

// gatedGen stands for the window's own renderer: each run says it started, then waits for go
// (or its ctx); its picture is a hash of the request's prompt and seeds, so a request changed on
// the way renders other pixels.
type gatedGen struct {
	started chan pipeline.Request
	proceed chan struct{}
	// slowStop, when set, keeps a cancelled run going until it is closed: a render that takes a
	// while to stop.
	slowStop chan struct{}
	// active and most count the runs at once
	mu           sync.Mutex
	active, most int
}

func (g *gatedGen) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	defer close(events)
	g.mu.Lock()
	g.active++
	g.most = max(g.most, g.active)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.active--
		g.mu.Unlock()
	}()
	g.started <- req
	select {
	case <-g.proceed:
	case <-ctx.Done():
		if g.slowStop != nil {
			<-g.slowStop
		}
		return nil, ctx.Err()
	}
	events <- pipeline.Event{Stage: pipeline.StageDenoising, Step: 1, Steps: 1}
	key, _ := json.Marshal([]any{req.Prompt, req.Seed, req.VariationSeed, req.Steps})
	h := sha256.Sum256(key)
	img := image.NewNRGBA(image.Rect(0, 0, 16, 16))
	for i := range img.Pix {
		img.Pix[i] = h[i%len(h)] ^ byte(i)
	}
	return &pipeline.Result{Image: img, Width: 16, Height: 16, Steps: 1, CFG: req.CFG, Seed: req.Seed, VariationSeed: req.VariationSeed}, nil
}

// lendingWindow is a window whose generator gen holds each run, a hub on loopback, and the
// window's Lend form filled in with the hub's address and token (not yet ticked); fp is the
// window's model's fingerprint, as the studio's clients match it.
type lendingWindow struct {
	h         *harness
	s         *window
	gen       *gatedGen
	hub       *macs.Hub
	l         *remote.Lend
	model, fp string
}

func newLendingWindow(t *testing.T) *lendingWindow {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the model found sound is remembered here, not in the user's cache
	w := &lendingWindow{model: tinyModelPath(t), gen: &gatedGen{started: make(chan pipeline.Request, 4), proceed: make(chan struct{}, 4)}}
	w.h = newHarnessWith(t, 0, func(_ *harness, d *Deps) { d.Settings.Model = w.model; d.Generator = w.gen })
	w.h.patience = 3 * time.Minute // a bound for a busy machine: every wait is on an event
	w.s = w.h.s
	hub, err := macs.StartHub(macs.HubConfig{Listen: "127.0.0.1:0", Token: studioUIToken, Data: t.TempDir(), AckWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Close)
	w.hub = hub
	if w.fp, err = studiogen.ModelFingerprint(w.model); err != nil {
		t.Fatal(err)
	}
	w.l = w.s.remote.Lend()
	w.l.URL.SetText(hub.URL())
	w.l.Token.SetText(studioUIToken)
	return w
}

// Studio… → Lend this Mac to a studio: the window joins the hub, renders a client's batch of 2
// with its own renderer (each image's pixels those of a local run of the same request), says so
// under the canvas, and closing the window mid-job hands the job back: another Mac renders it
// as attempt 2.
func TestWindowLentToStudio(t *testing.T) {
	w := newLendingWindow(t)
	model, gen, h, s, hub, fp := w.model, w.gen, w.h, w.s, w.hub, w.fp
	l := w.l
	test.Tap(l.Check)
	if !l.Check.Checked || l.Err.Text != "" || !strings.Contains(s.network.Text, "Lent to the studio at "+hub.URL()) {
		t.Fatalf("lending: checked %v, error %q, indicator %q", l.Check.Checked, l.Err.Text, s.network.Text)
	}
	client, err := studiogen.New(hub.URL(), studioUIToken, "", fp, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	waitJoined(h, l) // the window is on the hub
	req := pipeline.Request{Prompt: "a harbour at dawn", Steps: 1, CFG: 1, Seed: 90, Count: 2}
	type outcome struct {
		res *pipeline.Result
		err error
	}
	got := make(chan outcome, 1)
	ctx, cancel := context.WithCancel(t.Context()) // the pumps bound the wait, on events
	defer cancel()
	go func() {
		res, err := client.Run(ctx, req, nil)
		got <- outcome{res, err}
	}()
	for range 2 {
		r := pumpUntil(h, "a studio image taken by the window", gen.started)
		h.pump("the indicator naming the studio image", func() bool {
			return strings.Contains(s.network.Text, "rendering image ")
		})
		if r.Prompt != req.Prompt {
			t.Errorf("the window rendered %q, want %q", r.Prompt, req.Prompt)
		}
		gen.proceed <- struct{}{}
	}
	o := pumpUntil(h, "the client's batch back", got)
	if o.err != nil {
		t.Fatal(o.err)
	}
	if len(o.res.Batch) != 2 {
		t.Fatalf("%d images back, want 2", len(o.res.Batch))
	}
	for i, r := range o.res.Batch {
		one := req
		one.Count = 0
		one.Seed, one.VariationSeed = req.ImageSeeds(i)
		gen.proceed <- struct{}{}
		local, err := gen.Run(context.Background(), one, make(chan pipeline.Event, 4))
		<-gen.started
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(studiogen.NRGBA(r.Image).Pix, local.Image.Pix) {
			t.Errorf("image %d: the window's studio pixels differ from its local render of seed %d", i+1, one.Seed)
		}
	}

	// Closing the window mid-job hands it back; another Mac takes it as attempt 2.
	data, _ := json.Marshal(map[string]any{"pipeline": studiogen.PipelineRequest{Prompt: "p", Steps: 1, Seed: 5}})
	job := &macs.Job{Batch: macs.NewBatchID(), Images: 1, Request: data,
		Fingerprint: macs.Fingerprint{Easel: app.Version, Model: fp, Kind: macs.KindPipeline}}
	events := make(chan macs.Event, 64)
	done := make(chan error, 1)
	go func() { done <- client.Conn().Run(ctx, []*macs.Job{job}, func(e macs.Event) { events <- e }) }()
	pumpUntil(h, "the window taking the last job", gen.started)
	h.closeWindow()
	other := &gatedGen{started: make(chan pipeline.Request, 1), proceed: make(chan struct{}, 1)}
	other.proceed <- struct{}{}
	oc, err := macs.Dial(ctx, hub.URL(), macs.DialOptions{Role: macs.RoleWorker, Token: studioUIToken, Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close()
	go (&studiogen.Lend{Name: "other", Model: model, ModelHash: fp, Gen: other}).Run(ctx, oc)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(events)
	var handedBack bool
	var result macs.Event
	for e := range events {
		switch e.Kind {
		case macs.EventHandedBack:
			handedBack = true
		case macs.EventResult:
			result = e
		}
	}
	if !handedBack || result.Worker != "other" || result.Attempt != 2 {
		t.Errorf("after the window closed: handed back %v, the image from %q at attempt %d; want other at attempt 2", handedBack, result.Worker, result.Attempt)
	}
}

// A job of the window's own, started while a lent window renders a studio image, waits for that
// image: this Mac's renderer runs one job at a time.
func TestLentWindowRunsOneJobAtATime(t *testing.T) {
	w := newLendingWindow(t)
	gen, h, s, hub, fp := w.gen, w.h, w.s, w.hub, w.fp
	l := w.l
	test.Tap(l.Check)
	client, err := studiogen.New(hub.URL(), studioUIToken, "", fp, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	waitJoined(h, l)                               // the window is on the hub
	ctx, cancel := context.WithCancel(t.Context()) // the pumps bound the wait, on events
	defer cancel()
	got := make(chan error, 1)
	go func() {
		_, err := client.Run(ctx, pipeline.Request{Prompt: "studio", Steps: 1, CFG: 1, Seed: 3}, nil)
		got <- err
	}()
	if r := pumpUntil(h, "the studio image taken", gen.started); r.Prompt != "studio" {
		t.Fatalf("first run %q, want the studio image", r.Prompt)
	}
	s.model.SetCustomSize(32, 32)
	test.Tap(s.generateBtn)
	h.pump("the window's own job running", func() bool {
		js := s.queue.Jobs()
		return len(js) == 1 && js[0].State == jobs.Running
	})
	gen.proceed <- struct{}{} // the studio image finishes
	if err := pumpUntil(h, "the studio image back", got); err != nil {
		t.Fatal(err)
	}
	pumpUntil(h, "the window's own job started", gen.started)
	gen.proceed <- struct{}{}
	h.pump("the window's own job done", func() bool { return s.queue.Jobs()[0].State.Finished() })
	gen.mu.Lock()
	defer gen.mu.Unlock()
	if gen.most != 1 {
		t.Errorf("%d runs at once on this Mac's renderer, want 1", gen.most)
	}
}

// dialStudio connects to the hub in a role, closed with the test.
func dialStudio(t *testing.T, hub *macs.Hub, role macs.Role, name string) *macs.Conn {
	t.Helper()
	c, err := macs.Dial(context.Background(), hub.URL(), macs.DialOptions{Role: role, Token: studioUIToken, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// waitJoined runs the window's calls until its lent worker has joined the hub (its status is
// there before it says so).
func waitJoined(h *harness, l *remote.Lend) {
	h.t.Helper()
	h.pump("the window joined the studio", func() bool {
		for _, e := range l.Events {
			if e.Kind == "joined" {
				return true
			}
		}
		return false
	})
}
