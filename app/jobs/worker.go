package jobs

import (
	"context"
	"errors"
	"fmt"

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
			ctx, cancel := context.WithCancel(q.base)
			e.cancel = cancel
			e.job.State = Running
			q.report(e, nil)
			return e, ctx
		}
	}
	q.mu.Unlock()
	return nil, nil
}

// outcome is what a generator returned.
type outcome struct {
	res *pipeline.Result
	err error
}

// run generates one job, forwarding its events, and records how it ended.
func (q *Queue) run(ctx context.Context, e *entry) {
	events := make(chan pipeline.Event, 8)
	ended := make(chan outcome, 1)
	req := e.job.Request
	go func() {
		res, err := q.gen.Run(ctx, req, events)
		ended <- outcome{res, err}
	}()
	for ev := range events {
		q.mu.Lock()
		e.job.Last = ev
		q.report(e, &ev)
	}
	out := <-ended

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
	q.report(e, nil)
}
