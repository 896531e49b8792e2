package jobs

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"easel/engine/mmapfile"
	"easel/engine/pipeline"
)

// work is the worker goroutine: it runs queued jobs in order until Close.
func (q *Queue) work() {
	defer close(q.done)
	for {
		e, ctx := q.takeNext()
		if e == nil {
			select {
			case <-q.wake:
				continue
			case <-q.quit:
				return
			}
		}
		q.run(ctx, e)
	}
}

// takeNext marks the first queued job running and gives it a context, or returns nil.
func (q *Queue) takeNext() (*entry, context.Context) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil, nil
	}
	for _, e := range q.jobs {
		if e.job.State == Queued {
			ctx, cancel := context.WithCancel(context.WithValue(q.base, originKey{}, e.job.Origin))
			ctx = WithStatus(ctx, func(s Status) { q.status(e, s) })
			e.cancel = cancel
			e.job.State = Running
			q.report(e, nil)
			return e, ctx
		}
	}
	q.mu.Unlock()
	return nil, nil
}

// forward records a running job's event and reports it.
func (q *Queue) forward(e *entry, ev pipeline.Event) {
	q.mu.Lock()
	e.job.Last = ev
	q.report(e, &ev)
}

// outcome is what a generator returned.
type outcome struct {
	res      *pipeline.Result
	err      error
	panicked bool
}

// runSafely runs the generator with a panic turned into the job's error: a fault reading the
// model file's mapping (mmapfile.Guard) as its *mmapfile.FaultError, anything else as a bug to
// report, so that a failing generator ends one job and never the app.
func (q *Queue) runSafely(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (res *pipeline.Result, err error) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		res = nil
		if fault, ok := mmapfile.AsFault(v); ok {
			err = fault
		} else {
			err = fmt.Errorf("internal error (a bug; please report it with this message): %v\n%s", v, debug.Stack())
		}
		err = &panicked{err}
	}()
	defer mmapfile.Guard()()
	return q.gen.Run(ctx, req, events)
}

// panicked marks an error recovered from a generator's panic.
type panicked struct{ error }

func (p *panicked) Unwrap() error { return p.error }

// forwardBuffered reports the events already on the channel, without waiting for more.
func (q *Queue) forwardBuffered(e *entry, events <-chan pipeline.Event) {
	for {
		select {
		case ev, open := <-events:
			if !open {
				return
			}
			q.forward(e, ev)
		default:
			return
		}
	}
}

// run generates one job, forwarding its events, and records how it ended.
func (q *Queue) run(ctx context.Context, e *entry) {
	defer q.awake()()
	events := make(chan pipeline.Event, 8)
	ended := make(chan outcome, 1)
	req := e.job.Request
	go func() {
		res, err := q.runSafely(ctx, req, events)
		var p *panicked
		if errors.As(err, &p) {
			ended <- outcome{nil, p.error, true}
			return
		}
		ended <- outcome{res, err, false}
	}()
	var out outcome
	for received := false; !received; {
		select {
		case ev, open := <-events:
			if !open {
				out, received = <-ended, true
				continue
			}
			q.forward(e, ev)
		case out = <-ended:
			// The generator returned; its last events may still be on their way (the pipeline's
			// channel closes after Run returns). One that panicked may never close it: what it
			// sent before is reported, and nothing waits for a close that may never come.
			received = true
			if out.panicked {
				q.forwardBuffered(e, events)
				continue
			}
			for ev := range events {
				q.forward(e, ev)
			}
		}
	}

	q.mu.Lock()
	stopped := ctx.Err() != nil
	e.cancel()
	switch {
	case out.err == nil && out.res != nil:
		e.job.State, e.job.Result = Done, out.res
	case out.err != nil && (stopped || errors.Is(out.err, context.Canceled)):
		e.job.State, e.job.Err = Cancelled, out.err
	case out.err != nil:
		e.job.State, e.job.Err = Failed, out.err
	default:
		e.job.State, e.job.Err = Failed, fmt.Errorf("job %d: the generator returned neither an image nor an error", e.job.ID)
	}
	q.forgetOldFinished()
	q.report(e, nil)
}

// originKey carries a running job's Origin in its context.
type originKey struct{}

// OriginOf is the Origin of the job whose context ctx is ("" for this app's own jobs), so a
// generator can tell jobs from a server apart (the window renders those itself).
func OriginOf(ctx context.Context) string {
	o, _ := ctx.Value(originKey{}).(string)
	return o
}
