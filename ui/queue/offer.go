package queue

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/unfinished"
)

// OfferActions are what the offer asks of the shell: Resume queues kept jobs from their
// checkpoints, in the order given; Where names where a kept job was rendering; Problem shows an
// error (a kept job that could not be discarded).
type OfferActions struct {
	Resume  func([]*unfinished.Pending)
	Where   func(*unfinished.Pending) string
	Problem func(error)
}

// Offer is the dialog offering the jobs earlier sessions left unfinished: one row per job — its
// prompt, seed, size, where it was rendering and where it stopped — each resumed or discarded on
// its own, or all at once; Later (or Esc) keeps them for the next launch.
type Offer struct {
	Dialog     dialog.Dialog
	Rows       *fyne.Container // a row per kept job still offered
	ResumeAll  *widget.Button
	DiscardAll *widget.Button

	left    []*unfinished.Pending
	pending map[*unfinished.Pending]fyne.CanvasObject
	act     OfferActions
}

// NewOffer builds the offer of left over parent (nil when left is empty); the shell shows its
// Dialog.
func NewOffer(left []*unfinished.Pending, act OfferActions, parent fyne.Window) *Offer {
	if len(left) == 0 {
		return nil
	}
	o := &Offer{Rows: container.NewVBox(), left: left, pending: map[*unfinished.Pending]fyne.CanvasObject{}, act: act}
	for _, p := range left {
		p := p
		resume := widget.NewButton("Resume", func() {
			o.settle(p)
			o.act.Resume([]*unfinished.Pending{p})
		})
		discard := widget.NewButton("Discard", func() {
			if err := p.Discard(); err != nil {
				o.act.Problem(err)
				return
			}
			o.settle(p)
		})
		row := Row(p, o.where(p), resume, discard)
		o.pending[p] = row
		o.Rows.Add(row)
	}
	o.ResumeAll = widget.NewButton(o.title(), func() {
		o.Dialog.Hide()
		o.act.Resume(o.stillOffered())
	})
	o.ResumeAll.Importance = widget.HighImportance
	o.DiscardAll = widget.NewButton("Discard all", func() {
		o.Dialog.Hide()
		for _, p := range o.stillOffered() {
			if err := p.Discard(); err != nil {
				o.act.Problem(err)
			}
		}
	})
	later := widget.NewButton("Later", func() { o.Dialog.Hide() })
	scroll := container.NewVScroll(o.Rows)
	scroll.SetMinSize(fyne.NewSize(560, min(float32(len(left)), 4)*rowHeight()))
	d := dialog.NewCustomWithoutButtons("Unfinished jobs", scroll, parent)
	d.SetButtons([]fyne.CanvasObject{later, o.DiscardAll, o.ResumeAll})
	o.Dialog = d
	return o
}

func (o *Offer) where(p *unfinished.Pending) string {
	if o.act.Where == nil {
		return p.Where
	}
	return o.act.Where(p)
}

// title is Resume all's text: how many jobs it resumes.
func (o *Offer) title() string {
	if len(o.pending) == 1 {
		return "Resume 1 unfinished job"
	}
	return fmt.Sprintf("Resume %d unfinished jobs", len(o.pending))
}

// stillOffered are the jobs neither resumed nor discarded, in the offer's order.
func (o *Offer) stillOffered() []*unfinished.Pending {
	var order []*unfinished.Pending
	for _, p := range o.left {
		if _, ok := o.pending[p]; ok {
			order = append(order, p)
		}
	}
	return order
}

// settle takes a job resumed or discarded on its own out of the offer (the last one closes it).
func (o *Offer) settle(p *unfinished.Pending) {
	o.Rows.Remove(o.pending[p])
	delete(o.pending, p)
	if len(o.pending) == 0 {
		o.Dialog.Hide()
		return
	}
	o.ResumeAll.SetText(o.title())
}

// RowText is a kept job's row: its prompt (truncated by the row), and its seed, size, where it
// was rendering and where it stopped.
func RowText(p *unfinished.Pending, where string) (prompt, facts string) {
	prompt = strings.Join(strings.Fields(p.Draft.Prompt), " ")
	if prompt == "" {
		prompt = "(no prompt)"
	}
	size := "size unknown"
	if w, h, err := p.Draft.OutputSize(); err == nil {
		size = fmt.Sprintf("%d×%d", w, h)
	}
	facts = fmt.Sprintf("seed %d · %s · %s · %s", p.Seed, size, where, p.Describe())
	if p.Problem != nil {
		facts += " · its checkpoint cannot be used, it starts again"
	}
	return prompt, facts
}

// Row is one kept job with its own Resume and Discard.
func Row(p *unfinished.Pending, where string, resume, discard *widget.Button) fyne.CanvasObject {
	prompt, facts := RowText(p, where)
	top := widget.NewLabelWithStyle(prompt, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	top.Truncation = fyne.TextTruncateEllipsis
	bottom := widget.NewLabel(facts)
	bottom.Truncation = fyne.TextTruncateEllipsis
	bottom.Importance = widget.LowImportance
	return container.NewBorder(nil, nil, nil, container.NewHBox(resume, discard), container.NewVBox(top, bottom))
}

// rowHeight is a row's height: two lines of text.
func rowHeight() float32 {
	return 2*widget.NewLabel("Ag").MinSize().Height + theme.Padding()
}
