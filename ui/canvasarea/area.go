package canvasarea

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/widget"
)

// The centre of the window shows one picture at a time at the full size of the region: the
// canvas (the image being made, the start image with its mask and frame), the latest batch's
// contact sheet, or Explore's grid. A batch or a grid that starts brings its sheet into view; the
// row of switches above brings back any of them (a sheet's switch is off until it has content).
const (
	Canvas = iota // the canvas
	Batch         // the latest batch's contact sheet
	Grid          // Explore's grid
)

var areaNames = [...]string{Canvas: "Canvas", Batch: "Batch", Grid: "Explore grid"}

// Area switches the centre between the canvas and the sheets. Bar is its row of switches, Stack
// the views (one shown).
type Area struct {
	views    [3]*fyne.Container
	switches [3]*widget.Button
	shown    int
	Bar      *fyne.Container
	Stack    *fyne.Container
}

// NewArea puts the canvas view and the two sheets in the centre, the canvas shown.
func NewArea(canvasView, batch, grid fyne.CanvasObject) *Area {
	a := &Area{}
	objs := []fyne.CanvasObject{canvasView, batch, grid}
	row := container.NewHBox()
	for i := range a.views {
		a.views[i] = container.NewStack(objs[i])
		a.switches[i] = widget.NewButton(areaNames[i], func() { a.Show(i) })
		row.Add(a.switches[i])
		if i != Canvas {
			a.switches[i].Disable()
		}
	}
	row.Add(layout.NewSpacer())
	a.Bar = row
	a.Stack = container.NewStack(a.views[0], a.views[1], a.views[2])
	a.Show(Canvas)
	return a
}

// Shown is the view in the centre.
func (a *Area) Shown() int { return a.shown }

// Visible reports whether view i is in the centre.
func (a *Area) Visible(i int) bool { return a.views[i].Visible() }

// Show brings view i into the centre (and turns its switch on for good).
func (a *Area) Show(i int) {
	a.shown = i
	for j, v := range a.views {
		v.Hidden = j != i
		if j == i {
			a.switches[j].Importance = widget.HighImportance
			a.switches[j].Enable()
		} else {
			a.switches[j].Importance = widget.MediumImportance
		}
		a.switches[j].Refresh()
	}
	a.Stack.Refresh()
}
