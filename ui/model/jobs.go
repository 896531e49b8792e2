package model

import (
	"easel/app/compose"
	"easel/app/imagefile"
	"easel/app/jobs"
)

// JobID is the queue's id of a job.
type JobID = jobs.ID

// JobRecord is what the window remembers of a job it submitted while the job lives: what it was
// made from (for its PNG's settings), its predicted peak memory, an upscale's Hires record, and
// where it renders ("" this Mac).
type JobRecord struct {
	Draft compose.Draft
	Peak  int64
	Hires *imagefile.HiresSettings
	Where string
}

// Submitted records a job the window queued.
func (w *Window) Submitted(id JobID, r JobRecord) {
	w.jobs[id] = r
	w.changed(JobsChanged)
}

// Job is job id's record (false once it ended, or for a job the window did not submit).
func (w *Window) Job(id JobID) (JobRecord, bool) {
	r, ok := w.jobs[id]
	return r, ok
}

// Started marks id the running job.
func (w *Window) Started(id JobID) {
	w.current = id
	w.changed(JobsChanged)
}

// Current is the running job (0 when none runs).
func (w *Window) Current() JobID { return w.current }

// Live is how many submitted jobs' records are kept.
func (w *Window) Live() int { return len(w.jobs) }

// Ended says job id stopped: it finished, failed or was cancelled (its record stays until
// Forget: a finished job's image is saved from it). A notice about it goes with it unless it is
// an error (NoticeChanged is then told too).
func (w *Window) Ended(id JobID) {
	if w.current == id {
		w.current = 0
	}
	c := JobsChanged
	if w.notice.Job == id && id != 0 && w.notice.Kind != NoticeError {
		w.notice = Notice{}
		c |= NoticeChanged
	}
	w.changed(c)
}

// Forget drops job id's record (its image is saved, or it made none).
func (w *Window) Forget(id JobID) {
	if _, ok := w.jobs[id]; !ok {
		return
	}
	delete(w.jobs, id)
	w.changed(JobsChanged)
}
