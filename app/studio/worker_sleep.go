package studio

import (
	"context"
	"time"

	"easel/app/activity"
)

// A worker and the Mac's sleep (app/activity): on the sleep notice the job in hand goes back to
// the queue at once (Nak, as on a quit) and the sleep waits until it has (at most
// activity.FlushTimeout); until the Mac wakes the worker pulls nothing, and after the wake it
// goes on taking jobs — it stays joined, so a lent window or `easel studio join` needs nothing
// from the artist after a night's sleep. A sleep that comes with no notice (the lid closed on a
// Mac whose notices were refused) is covered by the ack wait: the job is redelivered.

// jobInHand is the job being handled, for HandBack.
type jobInHand struct {
	giveBack context.CancelFunc // hands the job back (its handle's context ends)
	over     chan struct{}      // closed when handle has returned
}

// holdJob makes the context a job is handled under: ending it hands the job back. release is
// called when handle returns.
func (w *Worker) holdJob(ctx context.Context) (jctx context.Context, release func()) {
	jctx, cancel := context.WithCancel(ctx)
	h := &jobInHand{giveBack: cancel, over: make(chan struct{})}
	w.mu.Lock()
	w.inHand = h
	w.mu.Unlock()
	return jctx, func() {
		w.mu.Lock()
		if w.inHand == h {
			w.inHand = nil
		}
		w.mu.Unlock()
		cancel()
		close(h.over)
	}
}

// HandBack hands the job in hand back to the queue at once, as a quit would, without leaving the
// studio; the channel is closed when it has gone back (at once when no job is in hand).
func (w *Worker) HandBack() <-chan struct{} {
	w.mu.Lock()
	h := w.inHand
	w.mu.Unlock()
	if h == nil {
		done := make(chan struct{})
		close(done)
		return done
	}
	h.giveBack()
	return h.over
}

// watchSleep registers the hand-back with the Mac's sleep notice for the life of Run.
func (w *Worker) watchSleep() (remove func()) {
	return activity.OnWillSleep(func() {
		select {
		case <-w.HandBack():
		case <-time.After(activity.FlushTimeout):
		}
	})
}

// handBackReason is said with a hand-back: why the job went back.
func handBackReason() string {
	if activity.Asleep() {
		return "this Mac is going to sleep"
	}
	return ""
}
