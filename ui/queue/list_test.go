package queue

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"easel/app/jobs"
)

// labels are the texts of the labels under o, in order.
func labels(o fyne.CanvasObject) []string {
	var out []string
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch w := o.(type) {
		case *widget.Label:
			out = append(out, w.Text)
		case *fyne.Container:
			for _, c := range w.Objects {
				walk(c)
			}
		}
	}
	walk(o)
	return out
}

// buttons are the buttons under o, in order.
func buttons(o fyne.CanvasObject) []*widget.Button {
	var out []*widget.Button
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch w := o.(type) {
		case *widget.Button:
			out = append(out, w)
		case *fyne.Container:
			for _, c := range w.Objects {
				walk(c)
			}
		}
	}
	walk(o)
	return out
}

// TestListShowsJobsNewestFirst: the list built alone shows the jobs newest first with the seed
// part kept whole and where each renders under it, only the last FinishedShown ended jobs, a
// cancel button on those still running that cancels that job, and the lent row first.
func TestListShowsJobsNewestFirst(t *testing.T) {
	test.NewTempApp(t)
	var cancelled []jobs.ID
	lent := widget.NewLabel("For the studio · rendering")
	l := NewList(ListActions{
		Cancel: func(id jobs.ID) { cancelled = append(cancelled, id) },
		Placement: func(id jobs.ID) string {
			if id == 6 {
				return " · on studio Mac mini"
			}
			return ""
		},
	})
	if got := labels(l.Rows); len(got) != 1 || !strings.HasPrefix(got[0], "Nothing queued.") {
		t.Fatalf("an empty queue shows %q", got)
	}
	var all []jobs.Job
	for id := jobs.ID(1); id <= 5; id++ {
		all = append(all, jobs.Job{ID: id, State: jobs.Done, Label: "an owl · seed 1"})
	}
	all = append(all, jobs.Job{ID: 6, State: jobs.Running, Label: "a very long prompt about a fox · seed 42 · 4 images"},
		jobs.Job{ID: 7, State: jobs.Queued, Origin: "the API", Label: "a kite · seed 9"})
	l.Show(all)
	rows := l.Rows.Objects
	if len(rows) != 2+FinishedShown {
		t.Fatalf("%d rows for 2 live and 5 ended jobs, want %d", len(rows), 2+FinishedShown)
	}
	if got := labels(rows[0]); len(got) != 2 || got[0] != "#7 · queued · from the API · a kite ·" || got[1] != "seed 9" {
		t.Errorf("the newest row says %q", got)
	}
	if got := labels(rows[1]); len(got) != 3 || got[1] != "on studio Mac mini" || got[2] != "seed 42 · 4 images" {
		t.Errorf("the running row says %q (want its placement under it and the seed whole)", got)
	}
	if got := labels(rows[2]); got[0] != "#5 · done · an owl ·" || len(buttons(rows[2])) != 0 {
		t.Errorf("an ended row says %q with %d buttons", got, len(buttons(rows[2])))
	}
	test.Tap(buttons(rows[1])[0])
	if len(cancelled) != 1 || cancelled[0] != 6 {
		t.Errorf("the running row's cancel cancelled %v", cancelled)
	}

	l.act.Lent = func() fyne.CanvasObject { return lent }
	l.Show(nil)
	if len(l.Rows.Objects) != 1 || l.Rows.Objects[0] != lent {
		t.Error("the lent row is not the first (and only) row")
	}
}

// TestSplitSeed: a row's text splits before its last " · seed ".
func TestSplitSeed(t *testing.T) {
	for _, c := range []struct{ in, head, seed string }{
		{"#1 · running · a seed · of doubt · seed 5 · 2 images", "#1 · running · a seed · of doubt ·", "seed 5 · 2 images"},
		{"#2 · done · upscale", "#2 · done · upscale", ""},
	} {
		if h, s := SplitSeed(c.in); h != c.head || s != c.seed {
			t.Errorf("SplitSeed(%q) = %q, %q", c.in, h, s)
		}
	}
}
