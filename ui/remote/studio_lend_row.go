package remote

import (
	"fmt"
	"image"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	macs "easel/app/studio"
	"easel/engine/pipeline"
)

// LentJob is the studio image a lent window renders on this Mac (studio_lend.go), shown as a row
// at the top of the queue while it runs. It is not a job of the window's queue: it does not count
// as the window's own pending work (lending waits on that queue alone) and has no cancel button —
// unchecking "Lend this Mac to the studio" hands it back.
type LentJob struct {
	Batch         string
	Index, Images int // Index is 0-based; Images is the batch's size (0 until the first step tells)
	Attempt       int
	Prompt        string // from its request, once the render started (Requested says so)
	Seed          uint64
	Requested     bool
	Step, Steps   int
}

// LentRow is the lent image's queue row, made once and updated in place on each step: Head
// says what it is, Right its seed and step, Place which image of which batch on which Mac.
type LentRow struct {
	Head, Right, Place *widget.Label
	Box                *fyne.Container
}

// lentEvent follows the lent worker: a job taken gets a row; finished, handed back or failed, it
// leaves the queue.
func (w *Work) lentEvent(e macs.WorkerEvent) {
	switch e.Kind {
	case "joined":
	case "taken":
		w.setLentJob(&LentJob{Batch: e.Batch, Index: e.Index, Attempt: max(e.Attempt, 1)})
	default:
		w.setLentJob(nil)
	}
}

// setLentJob puts the studio image being rendered here (nil: none) in the indicator and the queue.
func (w *Work) setLentJob(j *LentJob) {
	w.Lend().Job = j
	w.ShowNetwork()
	w.sh.QueueChanged()
}

// lentRequest notes the request of the image in hand (its render has started).
func (w *Work) lentRequest(req pipeline.Request) {
	l := w.Lend()
	if l.Job == nil {
		return
	}
	l.Job.Prompt, l.Job.Seed, l.Job.Requested = req.Prompt, req.Seed, true
	w.fillLentRow()
}

// lentStep notes a finished step of the image in hand.
func (w *Work) lentStep(job *macs.Job, step, of int) {
	l := w.Lend()
	if l.Job == nil || l.Job.Batch != job.Batch || l.Job.Index != job.Index {
		return
	}
	l.Job.Images, l.Job.Step, l.Job.Steps = job.Images, step, of
	w.fillLentRow()
	if w.sh.Model.Current() == 0 { // the progress line is the studio's while no job of the artist's runs
		w.sh.Progress(fmt.Sprintf("For the studio: image %d, step %d of %d", l.Job.Index+1, step, of))
	}
}

// LentRowObject is the queue's row for the studio image rendered here, nil when there is none.
func (w *Work) LentRowObject() fyne.CanvasObject {
	l := w.studioLend
	if l == nil || l.Job == nil {
		return nil
	}
	if l.Row == nil {
		r := &LentRow{Head: widget.NewLabel(""), Right: widget.NewLabel(""), Place: widget.NewLabel("")}
		r.Head.Truncation = fyne.TextTruncateEllipsis
		r.Place.Truncation = fyne.TextTruncateEllipsis
		r.Place.Importance = widget.LowImportance
		r.Box = container.NewBorder(nil, r.Place, nil, r.Right, r.Head)
		l.Row = r
	}
	w.fillLentRow()
	return l.Row.Box
}

// fillLentRow writes the row's texts: "For the studio · rendering · <prompt> ·" (cut short
// first), "seed N · step 3 of 20" whole, and under them which image of which batch, on which Mac
// (the indicator above says which studio).
func (w *Work) fillLentRow() {
	l := w.studioLend
	if l == nil || l.Job == nil || l.Row == nil {
		return
	}
	j, r := l.Job, l.Row
	head, right := "For the studio · rendering", "starting"
	if j.Requested {
		head, right = w.sh.RowLabel(j.Prompt, j.Seed)
		head = "For the studio · rendering · " + head
	}
	if j.Step > 0 {
		if right == "starting" {
			right = ""
		} else {
			right += " · "
		}
		right += fmt.Sprintf("step %d of %d", j.Step, j.Steps)
	}
	image := fmt.Sprintf("image %d", j.Index+1)
	if j.Images > 0 {
		image = fmt.Sprintf("image %d of %d", j.Index+1, j.Images)
	}
	place := fmt.Sprintf("Studio: %s of batch %s on %s", image, ShortBatch(j.Batch), w.sh.Machine)
	if j.Attempt > 1 {
		place += fmt.Sprintf(" (attempt %d)", j.Attempt)
	}
	r.Head.SetText(head)
	r.Right.SetText(right)
	r.Place.SetText(place)
	r.Box.Refresh() // the seed and step part may have grown: lay the row out again
}

// ShortBatch is a batch's identity cut to 8 characters, enough to tell batches apart on a screen.
func ShortBatch(b string) string {
	if len(b) > 8 {
		return b[:8]
	}
	return b
}

// watchLent passes the lending sess's render's events on to events (nil: none) and puts its
// previews on the canvas (showLentPicture).
func (w *Work) watchLent(sess *LendSession, events chan<- pipeline.Event) chan<- pipeline.Event {
	inner := make(chan pipeline.Event, 16)
	do := func(f func()) { w.lentDo(sess, f) }
	go func() {
		for ev := range inner {
			if p := ev.Preview; p != nil && p.Image != nil {
				framed := w.sh.Frame(p.Image, false)
				width, height := p.W*16, p.H*16
				do(func() { w.showLentPicture(framed, width, height, false) })
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

// showLentPicture shows the studio image rendered here on the canvas, labelled as the studio's;
// the shell shows it only while the canvas is the artist's to give (Shell.ShowStudioPicture).
func (w *Work) showLentPicture(framed image.Image, width, height int, final bool) {
	what := "rendering here"
	if final {
		what = "rendered here and sent back"
	}
	label := "For the studio: an image " + what
	if j := w.Lend().Job; j != nil {
		label = fmt.Sprintf("For the studio: image %d of batch %s, %s", j.Index+1, ShortBatch(j.Batch), what)
	}
	w.sh.ShowStudioPicture(framed, width, height, label)
}
