package jobs

import (
	"easel/engine/pipeline"
)

// ID names one job for the life of its queue (1, 2, 3, … in submission order).
type ID int

// State is where a job is.
type State int

// A job is Queued until the worker takes it, Running while it generates, then ends Done, Failed
// or Cancelled.
const (
	Queued State = iota
	Running
	Done
	Failed
	Cancelled
)

var stateNames = [...]string{"queued", "running", "done", "failed", "cancelled"}

// String is the state as the queue list shows it.
func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return "unknown"
	}
	return stateNames[s]
}

// Finished reports whether the job will not change any more.
func (s State) Finished() bool { return s >= Done }

// Job is a snapshot of one job.
type Job struct {
	ID    ID
	Label string // what the queue list shows (usually the start of the prompt)
	// Origin says who submitted the job: "" for this app (the window, the CLI), else where it
	// came from, as the queue and history show it ("API 192.0.2.7").
	Origin string
	// Owner is the submitter's own value (SubmitAll), handed back in every snapshot, so a
	// watcher knows its jobs from their first update.
	Owner any
	State State
	// Request is what was submitted (the queue never changes it).
	Request pipeline.Request
	// Last is the latest event of a running or finished job (zero before the first).
	Last pipeline.Event
	// Result is the finished image (Done only).
	Result *pipeline.Result
	// Err is why the job failed or was cancelled.
	Err error
}

// Update is what the queue reports to its listener: a job changed state, or a running job sent
// an event. Job is a snapshot taken at the time of the change.
type Update struct {
	Job Job
	// Event is set when the update is an event of a running job, nil for a state change.
	Event *pipeline.Event
	// Status, when set, is a running job's report of work outside the pipeline's stages (the
	// first-use GPU self-test, tuning the kernels): not a state change (Event is nil).
	Status *Status
}
