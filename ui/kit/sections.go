package kit

import (
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// Remeasured holds folding sections that measure themselves again whenever what an open section
// shows grows or shrinks. Fyne's accordion keeps the size it measured until it is refreshed, so a
// section whose text or rows changed would keep its old height: its new content drew over the
// sections under it, or out of the column's reach (the Explore grid seen only after folding and
// unfolding its section).
func Remeasured(a *widget.Accordion) fyne.CanvasObject {
	return &fyne.Container{Layout: &remeasureLayout{a: a}, Objects: []fyne.CanvasObject{a}}
}

// remeasureLayout lays its accordion over its whole place and refreshes it when the minimum
// sizes of the open sections' contents differ from those it last measured.
type remeasureLayout struct {
	a    *widget.Accordion
	seen []fyne.Size
}

func (l *remeasureLayout) MinSize([]fyne.CanvasObject) fyne.Size {
	now := make([]fyne.Size, 0, len(l.a.Items))
	for _, it := range l.a.Items {
		if it.Open && it.Detail != nil && it.Detail.Visible() {
			now = append(now, it.Detail.MinSize())
		} else {
			now = append(now, fyne.Size{})
		}
	}
	if !slices.Equal(now, l.seen) {
		l.a.Refresh()
	}
	l.seen = now
	return l.a.MinSize()
}

func (l *remeasureLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objs {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(size)
	}
}
