// Package kit holds the small pieces the window's regions share: a heading, a row of a
// fixed-width label beside a value (a long label truncates instead of widening the row), the
// checkerboard pictures are drawn over (checker.go), a picture as NRGBA (nrgba.go), a caption
// fitted to its width with an ellipsis (fit.go), folding sections that measure themselves again
// when their content changes (sections.go), the queue's job labels (labels.go) and what a job
// from Share this Mac hands the window (api_picture.go).
package kit

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Heading is a section's bold title.
func Heading(text string) *widget.Label {
	return widget.NewLabelWithStyle(text, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
}

// LabelColumnLayout is a row of a fixed-width label and a value that takes the rest: unlike a
// two-column grid, a long label never widens the row (the label truncates instead).
type LabelColumnLayout struct{ Label float32 }

func (l LabelColumnLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	if len(objs) != 2 {
		return
	}
	gap := theme.Padding()
	lw := min(l.Label, size.Width)
	objs[0].Move(fyne.NewPos(0, 0))
	objs[0].Resize(fyne.NewSize(lw, size.Height))
	objs[1].Move(fyne.NewPos(lw+gap, 0))
	objs[1].Resize(fyne.NewSize(max(size.Width-lw-gap, 0), size.Height))
}

func (l LabelColumnLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	if len(objs) != 2 {
		return fyne.Size{}
	}
	a, b := objs[0].MinSize(), objs[1].MinSize()
	return fyne.NewSize(l.Label+theme.Padding()+b.Width, max(a.Height, b.Height))
}

// LabelledRow is a label in a fixed column (truncated when longer) beside obj.
func LabelledRow(label fyne.CanvasObject, width float32, obj fyne.CanvasObject) *fyne.Container {
	return &fyne.Container{Layout: LabelColumnLayout{Label: width}, Objects: []fyne.CanvasObject{label, obj}}
}
