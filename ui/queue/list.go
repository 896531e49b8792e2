package queue

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/jobs"

	"easel/ui/kit"
)

// FinishedShown is how many ended jobs stay in the list.
const FinishedShown = 3

// ListActions are what the list asks of the shell: Cancel stops a job; Placement names where a
// job renders ("" when nothing to say: this Mac); Lent is a row of its own for a studio's image
// rendered here, shown first (nil: none). Placement and Lent may be nil.
type ListActions struct {
	Cancel    func(jobs.ID)
	Placement func(jobs.ID) string
	Lent      func() fyne.CanvasObject
}

// List shows the jobs waiting and running (and the last few that ended), newest first, each
// with a cancel button while it can still be stopped.
type List struct {
	// Box is the region: a heading and the rows; Rows holds the rows.
	Box  fyne.CanvasObject
	Rows *fyne.Container
	act  ListActions
}

// NewList is an empty list.
func NewList(act ListActions) *List {
	l := &List{Rows: container.NewVBox(), act: act}
	l.Box = container.NewVBox(kit.Heading("Queue"), l.Rows)
	l.Show(nil)
	return l
}

// Show replaces the rows with all's jobs (in the queue's order, oldest first).
func (l *List) Show(all []jobs.Job) {
	var objs []fyne.CanvasObject
	if l.act.Lent != nil {
		if lent := l.act.Lent(); lent != nil {
			objs = append(objs, lent)
		}
	}
	ended := 0
	for i := len(all) - 1; i >= 0; i-- { // newest first
		j := all[i]
		if j.State.Finished() {
			if ended >= FinishedShown {
				continue
			}
			ended++
		}
		objs = append(objs, l.row(j))
	}
	if len(objs) == 0 {
		empty := widget.NewLabel("Nothing queued. Generate while a job runs to queue the next.")
		empty.Importance = widget.LowImportance
		empty.Wrapping = fyne.TextWrapWord
		objs = append(objs, empty)
	}
	l.Rows.Objects = objs
	l.Rows.Refresh()
}

// row is one job: "#id · state · label", the seed part kept whole, where it renders under it.
func (l *List) row(j jobs.Job) fyne.CanvasObject {
	text := fmt.Sprintf("#%d · %s · %s", j.ID, j.State, j.Label)
	if j.Origin != "" {
		text = fmt.Sprintf("#%d · %s · from %s · %s", j.ID, j.State, j.Origin, j.Label)
	}
	// The prompt gives way (an ellipsis) before the seed: "seed N · K images" shows whole.
	head, seed := SplitSeed(text)
	label := widget.NewLabel(head)
	label.Truncation = fyne.TextTruncateEllipsis
	seedLabel := widget.NewLabel(seed)
	// Which Mac of a studio renders each image: a line of its own under the row, cut short
	// rather than widening the window.
	var place fyne.CanvasObject
	if l.act.Placement != nil {
		if pl := strings.TrimPrefix(l.act.Placement(j.ID), " · "); pl != "" {
			p := widget.NewLabel(pl)
			p.Truncation = fyne.TextTruncateEllipsis
			p.Importance = widget.LowImportance
			place = p
		}
	}
	if j.State.Finished() {
		label.Importance, seedLabel.Importance = widget.LowImportance, widget.LowImportance
		return container.NewBorder(nil, place, nil, seedLabel, label)
	}
	id := j.ID
	cancel := widget.NewButtonWithIcon("", theme.CancelIcon(), func() {
		if l.act.Cancel != nil {
			l.act.Cancel(id)
		}
	})
	return container.NewBorder(nil, place, nil, container.NewHBox(seedLabel, cancel), label)
}

// SplitSeed splits a queue row's text before its last " · seed ": the part that may be cut short
// and the seed part ("seed N", with " · K images" after it) that shows whole.
func SplitSeed(text string) (head, seed string) {
	i := strings.LastIndex(text, " · seed ")
	if i < 0 {
		return text, ""
	}
	return text[:i] + " ·", text[i+len(" · "):]
}
