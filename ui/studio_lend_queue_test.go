package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"easel/app"
	macs "easel/app/studio"
	"easel/app/studiogen"
	"easel/engine/pipeline"
)

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
	// The other image waits on the hub. The client publishes one image at a time, so on a busy
	// machine the witness can finish the first before the second goes out: wait for it to arrive
	// (bounded), the window's worker still holding back all the while.
	info, err := client.JS.Stream(ctx, macs.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		si, err := info.Info(ctx)
		if err != nil || si.State.Msgs > 1 {
			t.Fatalf("images waiting on the hub: %v (%v), want the other one", si.State.Msgs, err)
		}
		if si.State.Msgs == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the client's second image never reached the hub")
		}
	}
	if len(l.Events) != 1 || l.Job != nil || len(gen.started) != 0 {
		t.Fatalf("with the other image on the hub, the lent window had events %+v (job in hand %+v, %d runs started)", l.Events, l.Job, len(gen.started))
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
