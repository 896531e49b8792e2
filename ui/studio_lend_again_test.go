package ui

import (
	"context"
	"encoding/json"
	"image"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"easel/app"
	macs "easel/app/studio"
	"easel/app/studiogen"
	"easel/ui/canvasarea"
)

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

// An ended lending's worker goes on for a moment (its render stops, then it says the image was
// handed back), and those last calls reach the window after a new lending began. They must leave
// the new lending alone: here the first render stops only after the image was taken again, and
// the second attempt's row stays in the queue.
func TestLateCallsOfAnEndedLendingLeaveTheNextAlone(t *testing.T) {
	w := newLendingWindow(t)
	w.gen.slowStop = make(chan struct{})
	gen, h, s, hub, l := w.gen, w.h, w.s, w.hub, w.l
	test.Tap(l.Check)
	waitJoined(h, l)
	first := l.Session()

	ctx, cancel := context.WithCancel(t.Context()) // the pumps bound the wait, on events
	defer cancel()
	data, _ := json.Marshal(map[string]any{"pipeline": studiogen.PipelineRequest{Prompt: "a lighthouse in fog", Steps: 1, Seed: 3}})
	job := &macs.Job{Batch: macs.NewBatchID(), Images: 1, Request: data,
		Fingerprint: macs.Fingerprint{Easel: app.Version, Model: w.fp, Kind: macs.KindPipeline}}
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
	test.Tap(l.Check) // off: the image goes back, but its render has not stopped yet
	pumpUntil(h, "the client told the image was handed back", handedBack)

	test.Tap(l.Check) // lent again: the image is taken again while the first render still runs
	h.pump("the row of the second attempt", func() bool { return l.Job != nil && l.Job.Requested && l.Job.Attempt == 2 })
	close(gen.slowStop) // the first render stops now: its worker says so, late
	pumpUntil(h, "the first lending's worker gone", first.Done())
	drained := false
	s.deps.Do(func() { drained = true }) // after every call the first worker made
	h.pump("the first worker's last calls", func() bool { return drained })
	if l.Job == nil || l.Job.Attempt != 2 || l.Session() == nil || !l.Check.Checked {
		t.Fatalf("the first lending's late calls changed the second: job %+v, lent %v, ticked %v", l.Job, l.Session() != nil, l.Check.Checked)
	}
	if s.queueList.Rows.Objects[0] != l.Row.Box || !strings.HasSuffix(l.Row.Place.Text, "(attempt 2)") {
		t.Errorf("the row of the image taken again: %q", l.Row.Place.Text)
	}
	if r := pumpUntil(h, "the image rendered again", gen.started); r.Prompt != "a lighthouse in fog" {
		t.Fatalf("taken again: %q", r.Prompt)
	}
	gen.proceed <- struct{}{}
	if err := pumpUntil(h, "the client's image", done); err != nil {
		t.Fatal(err)
	}
	h.pump("the row gone", func() bool { return l.Job == nil })
}
