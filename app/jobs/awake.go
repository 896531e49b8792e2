package jobs

// KeepAwake makes the queue call hold while each job runs (hold begins something, such as
// app/activity's assertion that keeps the Mac from idle-sleeping, and returns its end); nil stops.
// Call it before submitting jobs.
func (q *Queue) KeepAwake(hold func() (end func())) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.hold = hold
}

// awake begins the hold for a job starting, and returns its end.
func (q *Queue) awake() (end func()) {
	q.mu.Lock()
	hold := q.hold
	q.mu.Unlock()
	if hold == nil {
		return func() {}
	}
	return hold()
}
