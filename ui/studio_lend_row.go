package ui

import (
	"easel/ui/queue"
	"fmt"
	"image"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	macs "easel/app/studio"
	"easel/engine/pipeline"
	"easel/ui/canvasarea"
)

// lentJob is the studio image a lent window renders on this Mac (studio_lend.go), shown as a row
// at the top of the queue while it runs. It is not a job of the window's queue: it does not count
// as the window's own pending work (lending waits on that queue alone) and has no cancel button —
// unchecking "Lend this Mac to the studio" hands it back.
type lentJob struct {
	batch         string
	index, images int // index is 0-based; images is the batch's size (0 until the first step tells)
	attempt       int
	prompt        string // from its request, once the render started (requested says so)
	seed          uint64
	requested     bool
	step, steps   int
}

// lentRow is the lent image's queue row, made once and updated in place on each step.
type lentRow struct {
	head, right, place *widget.Label
	box                *fyne.Container
}

// lentEvent follows the lent worker: a job taken gets a row; finished, handed back or failed, it
// leaves the queue.
func (s *window) lentEvent(e macs.WorkerEvent) {
	switch e.Kind {
	case "joined":
	case "taken":
		s.setLentJob(&lentJob{batch: e.Batch, index: e.Index, attempt: max(e.Attempt, 1)})
	default:
		s.setLentJob(nil)
	}
}

// setLentJob puts the studio image being rendered here (nil: none) in the indicator and the queue.
func (s *window) setLentJob(j *lentJob) {
	s.lend().job = j
	s.showNetwork()
	s.queueList.Show(s.queue.Jobs())
}

// lentRequest notes the request of the image in hand (its render has started).
func (s *window) lentRequest(req pipeline.Request) {
	l := s.lend()
	if l.job == nil {
		return
	}
	l.job.prompt, l.job.seed, l.job.requested = req.Prompt, req.Seed, true
	s.fillLentRow()
}

// lentStep notes a finished step of the image in hand.
func (s *window) lentStep(job *macs.Job, step, of int) {
	l := s.lend()
	if l.job == nil || l.job.batch != job.Batch || l.job.index != job.Index {
		return
	}
	l.job.images, l.job.step, l.job.steps = job.Images, step, of
	s.fillLentRow()
	if s.model.Current() == 0 { // the progress line is the studio's while no job of the artist's runs
		s.progress.Stage.SetText(fmt.Sprintf("For the studio: image %d, step %d of %d", l.job.index+1, step, of))
	}
}

// lentRowObject is the queue's row for the studio image rendered here, nil when there is none.
func (s *window) lentRowObject() fyne.CanvasObject {
	l := s.studioLend
	if l == nil || l.job == nil {
		return nil
	}
	if l.row == nil {
		r := &lentRow{head: widget.NewLabel(""), right: widget.NewLabel(""), place: widget.NewLabel("")}
		r.head.Truncation = fyne.TextTruncateEllipsis
		r.place.Truncation = fyne.TextTruncateEllipsis
		r.place.Importance = widget.LowImportance
		r.box = container.NewBorder(nil, r.place, nil, r.right, r.head)
		l.row = r
	}
	s.fillLentRow()
	return l.row.box
}

// fillLentRow writes the row's texts: "For the studio · rendering · <prompt> ·" (cut short
// first), "seed N · step 3 of 20" whole, and under them which image of which batch, on which Mac
// (the indicator above says which studio).
func (s *window) fillLentRow() {
	l := s.studioLend
	if l == nil || l.job == nil || l.row == nil {
		return
	}
	j, r := l.job, l.row
	head, right := "For the studio · rendering", "starting"
	if j.requested {
		head, right = queue.SplitSeed("For the studio · rendering · " + jobLabel(j.prompt, j.seed))
	}
	if j.step > 0 {
		if right == "starting" {
			right = ""
		} else {
			right += " · "
		}
		right += fmt.Sprintf("step %d of %d", j.step, j.steps)
	}
	image := fmt.Sprintf("image %d", j.index+1)
	if j.images > 0 {
		image = fmt.Sprintf("image %d of %d", j.index+1, j.images)
	}
	place := fmt.Sprintf("Studio: %s of batch %s on %s", image, shortBatch(j.batch), thisMachine())
	if j.attempt > 1 {
		place += fmt.Sprintf(" (attempt %d)", j.attempt)
	}
	r.head.SetText(head)
	r.right.SetText(right)
	r.place.SetText(place)
	r.box.Refresh() // the seed and step part may have grown: lay the row out again
}

// shortBatch is a batch's identity cut to 8 characters, enough to tell batches apart on a screen.
func shortBatch(b string) string {
	if len(b) > 8 {
		return b[:8]
	}
	return b
}

// watchLent passes the lending sess's render's events on to events (nil: none) and puts its previews on the
// canvas (showLentPicture).
func (s *window) watchLent(sess *lendSession, events chan<- pipeline.Event) chan<- pipeline.Event {
	inner := make(chan pipeline.Event, 16)
	do := func(f func()) { s.lentDo(sess, f) }
	go func() {
		for ev := range inner {
			if p := ev.Preview; p != nil && p.Image != nil {
				framed := canvasarea.FramePreview(p.Image)
				w, h := p.W*16, p.H*16
				do(func() { s.showLentPicture(framed, w, h, false) })
			}
			if events != nil {
				events <- ev
			}
		}
		if events != nil {
			close(events)
		}
	}()
	return inner
}

// showLentPicture shows the studio image rendered here on the canvas, labelled as the studio's,
// while the canvas is the artist's to give: no start image being painted, no job of theirs
// running, and no picture of theirs on it (a studio image never replaces the artist's).
func (s *window) showLentPicture(framed image.Image, w, h int, final bool) {
	if s.canvas.Editing || s.model.Current() != 0 || (s.canvas.Current != nil && !s.lentShown) {
		return
	}
	what := "rendering here"
	if final {
		what = "rendered here and sent back"
	}
	l := s.lend()
	label := "For the studio: an image " + what
	if j := l.job; j != nil {
		label = fmt.Sprintf("For the studio: image %d of batch %s, %s", j.index+1, shortBatch(j.batch), what)
	}
	s.canvas.ShowPreview(framed, w, h, label)
	s.canvasJob = 0
	s.setShownFile("")
	s.lentShown = true // after setShownFile, which hands the canvas back to the artist
}
