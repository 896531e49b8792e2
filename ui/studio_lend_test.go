package ui

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"image"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"easel/app"
	"easel/app/jobs"
	macs "easel/app/studio"
	"easel/app/studiogen"
	"easel/engine/pipeline"
	"easel/ui/canvasarea"
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

// A lent window takes no studio image while a job of its own runs: once its pull under way when
// the job started has ended, another Mac (the witness, joined after it, so the window's pull
// would have come first) takes the batch's first image,
// the hub says the window is idle with the second image waiting, and the window takes that one
// only once its own job is done. The studio image rendered here has a row of its own at the top
// of the queue — for the studio, its prompt and live step, which image of which batch — that is
// not one of the window's jobs (no cancel button, not pending: the window's own next job still
// counts alone), fits the 1280×800 window next to a queued job of the window's, and leaves the
// queue when the image is done.
func TestLentWindowWaitsForItsOwnQueue(t *testing.T) {
	w := newLendingWindow(t)
	model, gen, h, s, hub, fp := w.model, w.gen, w.h, w.s, w.hub, w.fp
	ctx, cancel := context.WithCancel(t.Context()) // the pumps bound the wait, on events
	defer cancel()

	// Lent: the window joins the hub.
	l := w.l
	l.Held = make(chan struct{}, 1)
	test.Tap(l.Check)
	if !l.Check.Checked || l.Err.Text != "" {
		t.Fatalf("lending: checked %v, error %q", l.Check.Checked, l.Err.Text)
	}
	waitJoined(h, l)

	// The window's own job, held mid-run. The worker's pull under way when it started (up to its
	// fetch wait) ends, and the worker then waits for the window's queue before pulling again.
	s.model.SetCustomSize(32, 32)
	s.prompt.Text.SetText("the window's own picture")
	test.Tap(s.generateBtn)
	if r := pumpUntil(h, "the window's own job started", gen.started); r.Prompt != "the window's own picture" {
		t.Fatalf("first run %q, want the window's own job", r.Prompt)
	}
	pumpUntil(h, "the lent worker waiting for the window's own queue", l.Held)
	here, _ := os.Hostname()

	// A client's batch of 2.
	client := dialStudio(t, hub, macs.RoleClient, "client")
	batch := macs.NewBatchID()
	prompt := "a lighthouse on a basalt cliff at dusk, gulls over the surf, warm light in the lantern room"
	var studioJobs []*macs.Job
	for i := range 2 {
		data, _ := json.Marshal(map[string]any{"pipeline": studiogen.PipelineRequest{Prompt: prompt, Steps: 1, CFG: 1, Seed: uint64(70 + i)}})
		studioJobs = append(studioJobs, &macs.Job{Batch: batch, Index: i, Images: 2, Request: data,
			Fingerprint: macs.Fingerprint{Easel: app.Version, Model: fp, Kind: macs.KindPipeline}})
	}
	var evMu sync.Mutex
	var clientEvents []macs.Event
	done := make(chan error, 1)
	go func() {
		done <- client.Run(ctx, studioJobs, func(e macs.Event) {
			evMu.Lock()
			clientEvents = append(clientEvents, e)
			evMu.Unlock()
		})
	}()

	// The witness takes one image and then no more.
	witnessGen := &gatedGen{started: make(chan pipeline.Request, 1), proceed: make(chan struct{}, 1)}
	witnessGen.proceed <- struct{}{}
	witnessDone := make(chan macs.WorkerEvent, 4)
	var once sync.Once
	witness := &studiogen.Lend{Name: "witness", Model: model, ModelHash: fp, Gen: witnessGen,
		Ready: func(ctx context.Context) error {
			first := false
			once.Do(func() { first = true })
			if first {
				return nil
			}
			<-ctx.Done()
			return ctx.Err()
		},
		OnEvent: func(e macs.WorkerEvent) {
			if e.Kind == "finished" {
				witnessDone <- e
			}
		}}
	go witness.Run(ctx, dialStudio(t, hub, macs.RoleWorker, "witness"))
	first := pumpUntil(h, "the witness's image", witnessDone)

	// The window took nothing: its only event is joined, its renderer runs its own job alone,
	// the hub has it idle with nothing done, and the other image waits.
	if len(l.Events) != 1 || l.Job != nil || len(gen.started) != 0 {
		t.Fatalf("while its own job runs, the lent window had events %+v (job in hand %+v, %d runs started)", l.Events, l.Job, len(gen.started))
	}
	st, err := client.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var mine *macs.WorkerStatus
	for i, w := range st.Workers {
		if w.Name == here {
			mine = &st.Workers[i]
		}
	}
	if mine == nil || mine.State != macs.StateIdle || mine.Done != 0 {
		t.Fatalf("the hub's status of the lent window while its own job runs: %+v, want idle with nothing done", mine)
	}
	// The other image waits: on the hub, or still in the client, which publishes one image at a
	// time (on a busy machine the witness can finish the first before the second goes out). That
	// the window left it is shown below: it takes it once its own job is done.
	if info, err := client.JS.Stream(ctx, macs.StreamName); err != nil {
		t.Fatal(err)
	} else if si, err := info.Info(ctx); err != nil || si.State.Msgs > 1 {
		t.Fatalf("images waiting on the hub: %v (%v), want at most the other one", si.State.Msgs, err)
	}

	// Its own job done, the window takes the other image.
	gen.proceed <- struct{}{}
	h.pump("the window's own job done", func() bool { return s.queue.Jobs()[0].State.Finished() })
	r := pumpUntil(h, "the studio image taken by the window", gen.started)
	if r.Prompt != prompt || r.Seed != uint64(70+1-first.Index) {
		t.Errorf("the window rendered %q seed %d, want the image the witness left", r.Prompt, r.Seed)
	}
	h.pump("the studio image's row in the queue", func() bool { return l.Job != nil && l.Job.Requested })
	row := s.queueList.Rows.Objects[0]
	if row != l.Row.Box {
		t.Fatalf("the queue's first row is %T, want the studio image rendered here", row)
	}
	if !strings.HasPrefix(l.Row.Head.Text, "For the studio · rendering · a lighthouse on a basalt cliff") || !strings.HasSuffix(l.Row.Head.Text, "… ·") ||
		l.Row.Right.Text != fmt.Sprintf("seed %d", r.Seed) ||
		l.Row.Place.Text != fmt.Sprintf("Studio: image %d of batch %s on %s", 2-first.Index, batch[:8], thisMachine()) {
		t.Errorf("the studio image's row: %q | %q | %q", l.Row.Head.Text, l.Row.Right.Text, l.Row.Place.Text)
	}
	walkObjects(row, func(o fyne.CanvasObject) {
		if _, ok := o.(*widget.Button); ok {
			t.Error("the studio image's row has a button: it is not one of the window's jobs")
		}
	})
	if n := s.queue.Pending(); n != 0 {
		t.Errorf("the window's queue counts %d pending jobs while it renders a studio image, want 0", n)
	}

	// A job of the window's own, queued meanwhile, waits for the studio image (this Mac's
	// renderer runs one at a time); both rows fit the window.
	s.prompt.Text.SetText(strings.Repeat("a very long prompt about a harbour town in winter ", 4))
	test.Tap(s.generateBtn)
	h.pump("the window's next job in the queue", func() bool { return len(s.queue.Jobs()) == 2 })
	if n := s.queue.Pending(); n != 1 {
		t.Errorf("the window's queue counts %d pending jobs, want its own 1", n)
	}
	assertLayoutFits(t, h.w, "a studio image rendered here above a job of the window's own")

	gen.proceed <- struct{}{} // the studio image's step, then its end
	h.pump("the studio image's step in its row", func() bool { return strings.HasSuffix(l.Row.Right.Text, "step 1 of 1") })
	if l.Row.Place.Text != fmt.Sprintf("Studio: image %d of 2 of batch %s on %s", 2-first.Index, batch[:8], thisMachine()) {
		t.Errorf("after a step the row's place is %q, want the batch's size in it", l.Row.Place.Text)
	}
	h.pump("the studio image gone from the queue", func() bool { return l.Job == nil })
	for _, o := range s.queueList.Rows.Objects {
		if o == l.Row.Box {
			t.Error("the studio image's row stayed in the queue after it was done")
		}
	}
	if err := pumpUntil(h, "the client's batch", done); err != nil {
		t.Fatal(err)
	}
	evMu.Lock()
	workers := map[int]string{}
	for _, e := range clientEvents {
		if e.Kind == macs.EventResult {
			workers[e.Index] = fmt.Sprintf("%s@%d", e.Worker, e.Attempt)
		}
	}
	evMu.Unlock()
	want := map[int]string{first.Index: "witness@1", 1 - first.Index: here + "@1"}
	if fmt.Sprint(workers) != fmt.Sprint(want) {
		t.Errorf("the client's results came from %v, want %v", workers, want)
	}

	// The window's own next job then runs.
	if r := pumpUntil(h, "the window's next job started", gen.started); !strings.HasPrefix(r.Prompt, "a very long prompt") {
		t.Errorf("after the studio image this Mac ran %q, want the window's next job", r.Prompt)
	}
	gen.proceed <- struct{}{}
	h.pump("the window's next job done", func() bool { return s.queue.Jobs()[1].State.Finished() })
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

// Unchecking "Lend this Mac" while it renders a studio image hands the image back: its row
// leaves the queue at once, and the client hears the image was handed back. Lent again, the
// window takes it as the second attempt, and its row says so.
func TestLentRowLeavesWhenHandedBack(t *testing.T) {
	w := newLendingWindow(t)
	gen, h, s, hub, fp := w.gen, w.h, w.s, w.hub, w.fp
	l := w.l
	test.Tap(l.Check)
	waitJoined(h, l)

	ctx, cancel := context.WithCancel(t.Context()) // the pumps bound the wait, on events
	defer cancel()
	data, _ := json.Marshal(map[string]any{"pipeline": studiogen.PipelineRequest{Prompt: "a kite over the dunes", Steps: 1, Seed: 8}})
	job := &macs.Job{Batch: macs.NewBatchID(), Images: 1, Request: data,
		Fingerprint: macs.Fingerprint{Easel: app.Version, Model: fp, Kind: macs.KindPipeline}}
	handedBack := make(chan macs.Event, 1)
	done := make(chan error, 1)
	go func() {
		done <- dialStudio(t, hub, macs.RoleClient, "client").Run(ctx, []*macs.Job{job}, func(e macs.Event) {
			if e.Kind == macs.EventHandedBack {
				select {
				case handedBack <- e:
				default:
				}
			}
		})
	}()
	pumpUntil(h, "the studio image taken by the window", gen.started)
	h.pump("the studio image's row", func() bool { return l.Job != nil && l.Job.Requested })
	if s.queueList.Rows.Objects[0] != l.Row.Box || !strings.Contains(l.Row.Head.Text, "a kite over the dunes") {
		t.Fatalf("the queue's first row is not the studio image's (%q)", l.Row.Head.Text)
	}

	test.Tap(l.Check) // off: the image goes back
	if l.Job != nil || strings.Contains(s.network.Text, "Lent") {
		t.Errorf("after the lending stopped: job in hand %+v, indicator %q", l.Job, s.network.Text)
	}
	for _, o := range s.queueList.Rows.Objects {
		if o == l.Row.Box {
			t.Error("the studio image's row stayed in the queue after it was handed back")
		}
	}
	if e := pumpUntil(h, "the client told the image was handed back", handedBack); e.Worker == "" {
		t.Errorf("handed back by no one: %+v", e)
	}

	// Lent again, the window takes the image back: its row says the second attempt.
	test.Tap(l.Check)
	if r := pumpUntil(h, "the image taken again", gen.started); r.Prompt != "a kite over the dunes" {
		t.Fatalf("taken again: %q", r.Prompt)
	}
	h.pump("the row of the second attempt", func() bool { return l.Job != nil && l.Job.Requested })
	if !strings.HasSuffix(l.Row.Place.Text, "(attempt 2)") || s.queueList.Rows.Objects[0] != l.Row.Box {
		t.Errorf("the row of the image taken again: %q", l.Row.Place.Text)
	}
	gen.proceed <- struct{}{}
	if err := pumpUntil(h, "the client's image", done); err != nil {
		t.Fatal(err)
	}
	h.pump("the row gone", func() bool { return l.Job == nil })
	// The window did not look idle: the studio's picture is on the canvas, labelled as the
	// studio's, and the progress line said the studio's step.
	h.pump("the studio's picture on the canvas", func() bool { return strings.HasPrefix(s.canvas.Caption.Text, "For the studio: image 1 of batch") })
	if !strings.HasPrefix(s.progress.Stage.Text, "For the studio: image 1, step 1 of 1") {
		t.Errorf("the progress line during the studio's image: %q", s.progress.Stage.Text)
	}
	// An image of the artist's own replaces it; a studio picture never replaces the artist's.
	s.showFile(h.writePNG("mine.png", 32, 32))
	h.pump("the artist's image on the canvas", func() bool { return s.canvas.IsFinal && s.canvas.Caption.Text == "" })
	s.showStudioPicture(canvasarea.FrameFinal(image.NewNRGBA(image.Rect(0, 0, 16, 16))), 16, 16, "For the studio: an image rendered here and sent back")
	if strings.HasPrefix(s.canvas.Caption.Text, "For the studio") {
		t.Error("a studio picture replaced the artist's image on the canvas")
	}
}
