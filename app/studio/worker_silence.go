package studio

import (
	"sync/atomic"
	"time"
)

// hubSilence judges whether a job in hand may have gone to another worker: the hub redelivers a
// job once it has heard nothing of it for the ack wait, and it also takes a stale worker's late
// acknowledgement, so the worker judges by its own clock. That clock must never run behind the
// hub's, or a copy whose job went elsewhere is called finished:
//   - it starts when the job is received, not when it is announced: a freeze (a sleep, a stop)
//     before the render, during the batch lookup or the "taken" line, counts;
//   - a word (InProgress) counts only once the hub has confirmed it (a flush), and from when it
//     was sent: a word buffered when the Mac froze reached the hub only after the wake.
//
// The judgement errs the other way only: a word the hub heard later than it was sent, or an ack
// confirmed a moment after it was taken, can make a copy the hub still kept look late — the client
// keeps the first copy of each image either way.
//
// Times are wall-clock nanoseconds: a Mac's monotonic clock may stand still while it sleeps.
type hubSilence struct {
	ackWait time.Duration
	last    atomic.Int64 // no later than the hub's last word of the job
	lapsed  atomic.Bool  // two confirmed words (or the receipt and a word) more than the ack wait apart
}

// newHubSilence starts the clock at the job's receipt.
func newHubSilence(received time.Time, ackWait time.Duration) *hubSilence {
	s := &hubSilence{ackWait: ackWait}
	s.last.Store(received.UnixNano())
	return s
}

// heard records a word sent at sent and confirmed by the hub at confirmed.
func (s *hubSilence) heard(sent, confirmed time.Time) {
	if time.Duration(confirmed.UnixNano()-s.last.Swap(sent.UnixNano())) > s.ackWait {
		s.lapsed.Store(true)
	}
}

// late says whether the job may have gone to another worker before the acknowledgement the hub
// confirmed at acked.
func (s *hubSilence) late(acked time.Time) bool {
	return s.lapsed.Load() || time.Duration(acked.UnixNano()-s.last.Load()) > s.ackWait
}
