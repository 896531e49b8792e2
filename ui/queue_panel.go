package ui

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

// queuePanel lists the jobs waiting and running (and the last few that ended), each with a
// cancel button while it can still be stopped.
type queuePanel struct {
	s    *window
	list *fyne.Container
	box  fyne.CanvasObject
}

// finishedShown is how many ended jobs stay in the list.
const finishedShown = 3

func newQueuePanel(s *window) *queuePanel {
	p := &queuePanel{s: s, list: container.NewVBox()}
	p.box = container.NewVBox(kit.Heading("Queue"), p.list)
	p.show(nil)
	return p
}

func (p *queuePanel) show(all []jobs.Job) {
	var objs []fyne.CanvasObject
	if lent := p.s.lentRowObject(); lent != nil { // a studio's image rendered here (studio_lend_row.go)
		objs = append(objs, lent)
	}
	ended := 0
	for i := len(all) - 1; i >= 0; i-- { // newest first
		j := all[i]
		if j.State.Finished() {
			if ended >= finishedShown {
				continue
			}
			ended++
		}
		text := fmt.Sprintf("#%d · %s · %s", j.ID, j.State, j.Label)
		if j.Origin != "" {
			text = fmt.Sprintf("#%d · %s · from %s · %s", j.ID, j.State, j.Origin, j.Label)
		}
		// The prompt gives way (an ellipsis) before the seed: "seed N · K images" shows whole.
		head, seed := splitSeed(text)
		label := widget.NewLabel(head)
		label.Truncation = fyne.TextTruncateEllipsis
		seedLabel := widget.NewLabel(seed)
		// Which Mac of a studio renders each image: a line of its own under the row, cut short
		// rather than widening the window.
		var place fyne.CanvasObject
		if pl := strings.TrimPrefix(p.s.placementOf(j.ID), " · "); pl != "" {
			l := widget.NewLabel(pl)
			l.Truncation = fyne.TextTruncateEllipsis
			l.Importance = widget.LowImportance
			place = l
		}
		if j.State.Finished() {
			label.Importance, seedLabel.Importance = widget.LowImportance, widget.LowImportance
			objs = append(objs, container.NewBorder(nil, place, nil, seedLabel, label))
			continue
		}
		id := j.ID
		cancel := widget.NewButtonWithIcon("", theme.CancelIcon(), func() { p.s.queue.Cancel(id) })
		objs = append(objs, container.NewBorder(nil, place, nil, container.NewHBox(seedLabel, cancel), label))
	}
	if len(objs) == 0 {
		empty := widget.NewLabel("Nothing queued. Generate while a job runs to queue the next.")
		empty.Importance = widget.LowImportance
		empty.Wrapping = fyne.TextWrapWord
		objs = append(objs, empty)
	}
	p.list.Objects = objs
	p.list.Refresh()
}

// splitSeed splits a queue row's text before its last " · seed ": the part that may be cut short
// and the seed part ("seed N", with " · K images" after it) that shows whole.
func splitSeed(text string) (head, seed string) {
	i := strings.LastIndex(text, " · seed ")
	if i < 0 {
		return text, ""
	}
	return text[:i] + " ·", text[i+len(" · "):]
}
