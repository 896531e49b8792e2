package jobs

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"easel/engine/pipeline"
)

// KeepFinished is how many finished jobs (done, failed or cancelled) the queue keeps, newest
// first; older ones are forgotten, with their requests (condition images), results (image, decoded
// planes, latents) and last events, so a long session's memory does not grow with every image.
// The listener got each job's final snapshot when it finished; what outlives the session is in the
// history on disk.
const KeepFinished = 16

// ErrClosed is returned by Submit after Close.
var ErrClosed = errors.New("the generation queue is closed (the window is closing)")

// ErrFull is returned by SubmitAll when the jobs would take the queue past its bound.
var ErrFull = errors.New("the generation queue is full")

// Queue holds the submitted jobs and runs them in order, one at a time, on its own worker
// goroutine. All methods are safe for concurrent use and never wait for a generation.
type Queue struct {
	gen    Generator
	notify func(Update)

	mu     sync.Mutex
	jobs   []*entry // every job submitted, in order
	nextID ID
	closed bool
	hold   func() (end func()) // KeepAwake's, while a job runs

	notifyMu sync.Mutex // held while notify runs, so updates arrive in the order of the changes
	watchers map[int]func(Update)
	nextW    int

	base     context.Context // cancelled by Close: stops the running job
	stopBase context.CancelFunc
	wake     chan struct{} // a job was submitted (buffered, 1)
	quit     chan struct{} // closed by Close
	done     chan struct{} // closed when the worker has returned
}

// entry is one job and, while it runs, the way to stop it.
type entry struct {
	job    Job
	cancel context.CancelFunc
}

// New starts a queue's worker. notify (may be nil) receives every state change and every event
// of a running job, in order, from the queue's goroutines; it must return quickly and must not
// call Submit, Cancel or Close itself (the window hands updates to fyne.Do).
func New(gen Generator, notify func(Update)) *Queue {
	if notify == nil {
		notify = func(Update) {}
	}
	q := &Queue{gen: gen, notify: notify, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	q.base, q.stopBase = context.WithCancel(context.Background())
	go q.work()
	return q
}

// Submit adds a job at the end of the queue and returns its ID. label is what lists show.
func (q *Queue) Submit(req pipeline.Request, label string) (ID, error) {
	ids, err := q.SubmitAll([]Submission{{Request: req, Label: label}}, 0)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// Submission is one job for SubmitAll.
type Submission struct {
	Request       pipeline.Request
	Label, Origin string
	Owner         any
}

// SubmitAll adds jobs at the end of the queue, one after the other, and returns their IDs. With
// maxPending > 0 it adds none and returns ErrFull when the jobs queued or running would then
// number more than maxPending (a server's bound; the window's own jobs are never refused).
func (q *Queue) SubmitAll(subs []Submission, maxPending int) ([]ID, error) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil, ErrClosed
	}
	if pending := q.pendingLocked(); maxPending > 0 && pending+len(subs) > maxPending {
		q.mu.Unlock() // pending was counted under the lock: the message reads no job after this
		return nil, fmt.Errorf("%w: %d jobs are waiting or running and %d more would pass its bound of %d", ErrFull, pending, len(subs), maxPending)
	}
	ids := make([]ID, 0, len(subs))
	for _, sub := range subs {
		q.nextID++
		e := &entry{job: Job{ID: q.nextID, Label: sub.Label, Origin: sub.Origin, Owner: sub.Owner, State: Queued, Request: sub.Request}}
		q.jobs = append(q.jobs, e)
		ids = append(ids, e.job.ID)
		q.report(e, nil)
		q.mu.Lock()
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return ids, nil
}

// Watch adds a listener that receives every update after the queue's own listener, in the same
// order and under the same rules (it must return quickly and not call the queue). stop removes
// it; updates already being reported may still arrive until stop returns.
func (q *Queue) Watch(f func(Update)) (stop func()) {
	q.notifyMu.Lock()
	defer q.notifyMu.Unlock()
	if q.watchers == nil {
		q.watchers = map[int]func(Update){}
	}
	q.nextW++
	key := q.nextW
	q.watchers[key] = f
	return func() {
		q.notifyMu.Lock()
		defer q.notifyMu.Unlock()
		delete(q.watchers, key)
	}
}

// tell sends u to the listener and the watchers; q.notifyMu is held.
func (q *Queue) tell(u Update) {
	q.notify(u)
	for _, w := range q.watchers {
		w(u)
	}
}

// Cancel stops a job: a queued one is cancelled at once, a running one stops within one backend
// op (its state becomes Cancelled when the generator returns). It reports whether the job was
// still queued or running.
func (q *Queue) Cancel(id ID) bool {
	q.mu.Lock()
	e := q.find(id)
	if e == nil || e.job.State.Finished() {
		q.mu.Unlock()
		return false
	}
	if e.job.State == Running {
		e.cancel()
		q.mu.Unlock()
		return true
	}
	e.job.State = Cancelled
	e.job.Err = fmt.Errorf("job %d was cancelled before it started: %w", id, context.Canceled)
	q.forgetOldFinished()
	q.report(e, nil)
	return true
}

// Jobs is a snapshot of every job, in submission order.
func (q *Queue) Jobs() []Job {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]Job, len(q.jobs))
	for i, e := range q.jobs {
		out[i] = e.job
	}
	return out
}

// Pending is the number of jobs queued or running.
func (q *Queue) Pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pendingLocked()
}

// pendingLocked is Pending with q.mu held.
func (q *Queue) pendingLocked() int {
	n := 0
	for _, e := range q.jobs {
		if !e.job.State.Finished() {
			n++
		}
	}
	return n
}

// Close cancels every job, waits for the worker (and the running generation) to stop, and
// refuses further submissions. It is safe to call more than once.
func (q *Queue) Close() {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		<-q.done
		return
	}
	q.closed = true
	var queued []*entry
	for _, e := range q.jobs {
		if e.job.State == Queued {
			e.job.State = Cancelled
			e.job.Err = fmt.Errorf("job %d was cancelled because the queue closed: %w", e.job.ID, context.Canceled)
			queued = append(queued, e)
		}
	}
	snaps := make([]Job, len(queued))
	for i, e := range queued {
		snaps[i] = e.job
	}
	q.notifyMu.Lock()
	q.mu.Unlock()
	for _, j := range snaps {
		q.tell(Update{Job: j})
	}
	q.notifyMu.Unlock()
	q.stopBase()
	close(q.quit)
	<-q.done
}

// forgetOldFinished drops finished jobs past the newest KeepFinished; q.mu is held.
func (q *Queue) forgetOldFinished() {
	finished := 0
	for _, e := range q.jobs {
		if e.job.State.Finished() {
			finished++
		}
	}
	if finished <= KeepFinished {
		return
	}
	drop := finished - KeepFinished
	kept := q.jobs[:0]
	for _, e := range q.jobs {
		if drop > 0 && e.job.State.Finished() {
			drop--
			continue
		}
		kept = append(kept, e)
	}
	clear(q.jobs[len(kept):]) // let the dropped entries go
	q.jobs = kept
}

// find is the entry with id; q.mu is held.
func (q *Queue) find(id ID) *entry {
	for _, e := range q.jobs {
		if e.job.ID == id {
			return e
		}
	}
	return nil
}

// report sends e's snapshot (with ev, if any) to the listener. It is called with q.mu held and
// releases it, keeping the order of updates equal to the order of changes.
func (q *Queue) report(e *entry, ev *pipeline.Event) {
	snap := e.job
	q.notifyMu.Lock()
	q.mu.Unlock()
	q.tell(Update{Job: snap, Event: ev})
	q.notifyMu.Unlock()
}
