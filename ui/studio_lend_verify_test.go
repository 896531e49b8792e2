package ui

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"easel/app"
	macs "easel/app/studio"
	"easel/app/studiogen"
	"easel/engine/cmf"
)

// A window lent to a studio checks its whole model file first, as easel studio join does: a copy
// with one payload byte flipped opens with the good fingerprint, so only the check can keep it
// from returning other pixels. Lending is refused with a sentence that says what to do, the box
// is unticked, and the window never joins, so it takes nothing from the studio.
func TestLendingRefusesADamagedModel(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // nothing remembered as sound
	good := tinyModelPath(t)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	f, err := cmf.Open(good)
	if err != nil {
		t.Fatal(err)
	}
	e := f.Entries()[len(f.Entries())/2]
	data[f.Envelope().Data.Off+e.Offset+e.Size/2] ^= 0x01
	f.Close()
	damaged := filepath.Join(t.TempDir(), "damaged.cmf")
	if err := os.WriteFile(damaged, data, 0o644); err != nil {
		t.Fatal(err)
	}
	goodFP, err := studiogen.ModelFingerprint(good)
	if err != nil {
		t.Fatal(err)
	}
	if fp, err := studiogen.ModelFingerprint(damaged); err != nil || fp != goodFP {
		t.Fatalf("the damaged copy should keep the good fingerprint: %v", err)
	}

	h := newHarnessWith(t, 0, func(_ *harness, d *Deps) { d.Settings.Model = damaged })
	h.patience = 3 * time.Minute // a bound for a busy machine: the wait is on the refusal
	hub, err := macs.StartHub(macs.HubConfig{Listen: "127.0.0.1:0", Token: studioUIToken, Data: t.TempDir(), AckWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Close)
	l := h.s.remote.Lend()
	l.URL.SetText(hub.URL())
	l.Token.SetText(studioUIToken)
	test.Tap(l.Check)
	sess := l.Session()
	if sess == nil {
		t.Fatalf("lending did not start: %q", l.Err.Text)
	}
	h.pump("lending refused for the damaged model", func() bool { return strings.Contains(l.Err.Text, "cannot lend") })
	want := "This Mac cannot lend: the model file damaged.cmf is damaged"
	if l.Check.Checked || l.Session() != nil || !strings.HasPrefix(l.Err.Text, want) || !strings.Contains(l.Err.Text, "Copy it again") {
		t.Fatalf("after the refusal: checked %v, lent %v, %q", l.Check.Checked, l.Session() != nil, l.Err.Text)
	}
	if strings.Contains(h.s.network.Text, "Lent") {
		t.Errorf("the indicator still says lent: %q", h.s.network.Text)
	}
	pumpUntil(h, "the refused worker gone", sess.Done())
	for _, ev := range l.Events {
		if ev.Kind == "joined" || ev.Kind == "taken" {
			t.Fatalf("the window joined the studio with a damaged model: %+v", l.Events)
		}
	}
	t.Logf("refused: %s", l.Err.Text)
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
