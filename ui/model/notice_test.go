package model

import (
	"testing"

	"easel/app/compose"
)

// TestNoticesEndWithTheirJob: a notice about a job goes when the job ends; an error about it, or
// a notice about nothing in particular, stays.
func TestNoticesEndWithTheirJob(t *testing.T) {
	w := New(compose.Draft{})
	var told []Change
	w.Observe(NoticeChanged|JobsChanged, func(c Change) { told = append(told, c) })
	w.Submitted(3, JobRecord{Peak: 10})
	w.Started(3)
	w.SayAbout(3, NoticeInfo, "Exploring %d cells.", 4)
	if n := w.Notice(); n.Text != "Exploring 4 cells." || n.Job != 3 {
		t.Fatalf("notice %+v", n)
	}
	w.Ended(3)
	if w.Notice().Text != "" || w.Current() != 0 {
		t.Errorf("after the job ended: notice %q, current %d", w.Notice().Text, w.Current())
	}
	if r, ok := w.Job(3); !ok || r.Peak != 10 {
		t.Error("the ended job's record went before Forget (its image is saved from it)")
	}
	w.Forget(3)
	if _, ok := w.Job(3); ok || w.Live() != 0 {
		t.Error("the forgotten job's record stayed")
	}
	if last := told[len(told)-2]; last != JobsChanged|NoticeChanged {
		t.Errorf("the end told %b, want jobs and notice", last)
	}
	w.SayAbout(4, NoticeError, "Job 4 failed: the disk is full")
	w.Ended(4)
	if w.Notice().Text == "" {
		t.Error("an error about a job went with the job")
	}
	w.Say(NoticeWarning, "Choose a model")
	w.Ended(5)
	if w.Notice().Text != "Choose a model" {
		t.Error("a notice about no job went when another job ended")
	}
	w.Quiet()
	if w.Notice() != (Notice{}) {
		t.Error("Quiet left a notice")
	}
}
