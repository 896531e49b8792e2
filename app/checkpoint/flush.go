package checkpoint

import (
	"sync"
	"time"
)

// flushState is what Flush needs of a Writer: whether the newest state offered was skipped (so
// the file is older than the run), the write in flight, and a flush asked of the next Offer.
type flushState struct {
	mu       sync.Mutex
	behind   bool          // the newest state offered was skipped
	inFlight chan struct{} // closed when the write in flight is over
	asked    chan struct{} // closed when the write of the next state offered is over
}

// take is the flush asked of this Offer (nil: none), which it then answers.
func (f *flushState) take() chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.asked
	f.asked = nil
	return a
}

// skipped notes that the state offered was not written (checkpoints are off, or a write is in
// flight); a flush asked of it is answered at once (nothing more will be written for it).
func (f *flushState) skipped(asked chan struct{}) {
	f.mu.Lock()
	f.behind = true
	f.mu.Unlock()
	if asked != nil {
		close(asked)
	}
}

// writing notes that the state offered is being written; its channel is closed when it is over.
func (f *flushState) writing() chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.behind = false
	f.inFlight = make(chan struct{})
	return f.inFlight
}

// wrote closes the write's channel and answers the flush it was asked for.
func (f *flushState) wrote(done, asked chan struct{}) {
	close(done)
	if asked != nil {
		close(asked)
	}
}

// Flush makes the run's newest state be on disk before the Mac sleeps (app/activity): it waits
// for the write in flight, and when the newest state offered was skipped (a write was in flight
// then), it has the next state offered written, whatever is in flight, and waits for that write.
// It waits at most timeout and reports whether the file then holds the newest state offered (a
// run that offers no more states, or checkpoints that are off, report false once it waited).
func (w *Writer) Flush(timeout time.Duration) bool {
	wait := w.flush.ask()
	if wait == nil {
		return true // nothing was offered, or it is written
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	select {
	case <-wait:
		w.flush.mu.Lock()
		defer w.flush.mu.Unlock()
		return !w.flush.behind && !w.off.Load()
	case <-deadline.C:
		return false
	}
}

// ask is the channel a flush waits on: the next state's write when the newest was skipped (asked
// of the next Offer), else the write in flight; nil when there is nothing to wait for.
func (f *flushState) ask() chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.behind {
		if f.asked == nil {
			f.asked = make(chan struct{})
		}
		return f.asked
	}
	return f.inFlight
}
