package jobs

import "context"

// Status is a report of a running job's work outside the pipeline's stages: the first-use GPU
// self-test and tuning the kernels for this Mac, which make a first Metal job take longer. The
// queue reports it as an Update whose Status is set (and Event nil).
type Status struct {
	// Line is a progress line ("Tuning for this Mac… gemm: swizzle (3 of 8)"); "" when the work
	// it described is over.
	Line string
	// Notice, when not empty, is a sentence for the user (a tuning that failed: the baseline
	// kernels run).
	Notice string
}

// statusKey carries a running job's status reporter in its context.
type statusKey struct{}

// WithStatus is ctx carrying report, which ReportStatus calls; the queue gives each job's context
// one that reports an Update.
func WithStatus(ctx context.Context, report func(Status)) context.Context {
	return context.WithValue(ctx, statusKey{}, report)
}

// ReportStatus tells the reporter of the job whose context ctx is (nothing without one).
func ReportStatus(ctx context.Context, s Status) {
	if report, ok := ctx.Value(statusKey{}).(func(Status)); ok && report != nil {
		report(s)
	}
}

// status reports a running job's Status.
func (q *Queue) status(e *entry, s Status) {
	q.mu.Lock()
	if e.job.State != Running {
		q.mu.Unlock()
		return
	}
	snap := e.job
	q.notifyMu.Lock()
	q.mu.Unlock()
	q.tell(Update{Job: snap, Status: &s})
	q.notifyMu.Unlock()
}
