package ui

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
	areaCanvas = iota
	areaBatch
	areaGrid
)

var areaNames = [...]string{areaCanvas: "Canvas", areaBatch: "Batch", areaGrid: "Explore grid"}

// canvasArea switches the centre between the canvas and the sheets.
type canvasArea struct {
	views    [3]*fyne.Container
	switches [3]*widget.Button
	shown    int
	bar      *fyne.Container
	stack    *fyne.Container
}

func newCanvasArea(canvasView, batch, grid fyne.CanvasObject) *canvasArea {
	a := &canvasArea{}
	objs := []fyne.CanvasObject{canvasView, batch, grid}
	row := container.NewHBox()
	for i := range a.views {
		a.views[i] = container.NewStack(objs[i])
		a.switches[i] = widget.NewButton(areaNames[i], func() { a.show(i) })
		row.Add(a.switches[i])
		if i != areaCanvas {
			a.switches[i].Disable()
		}
	}
	row.Add(layout.NewSpacer())
	a.bar = row
	a.stack = container.NewStack(a.views[0], a.views[1], a.views[2])
	a.show(areaCanvas)
	return a
}

// show brings view i into the centre (and turns its switch on for good).
func (a *canvasArea) show(i int) {
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
	a.stack.Refresh()
}
