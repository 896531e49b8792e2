package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// The window's three regions (DESIGN §8): the recipe on the left and the gallery on the right at
// fixed widths, the canvas in the centre taking the rest. Their widths never follow their
// content's, so no text, batch or file name can widen the window: content that does not fit
// shows up in the layout test (layout_check_test.go), not as a window past the screen.
const (
	recipeWidth  = 346 // 340 of fields and the scroll bar's gutter (mainwindow.go)
	galleryWidth = 320
	// canvasMinWidth and windowMinHeight are the smallest the centre and the window go; with the
	// two columns they keep the window's minimum well inside a 1280×800 screen.
	canvasMinWidth  = 420
	windowMinHeight = 560
)

// regionsLayout places three objects: left and right at their fixed widths, the centre between.
type regionsLayout struct{}

func (regionsLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	if len(objs) != 3 {
		return
	}
	gap := theme.Padding()
	left, centre, right := objs[0], objs[1], objs[2]
	left.Move(fyne.NewPos(0, 0))
	left.Resize(fyne.NewSize(recipeWidth, size.Height))
	right.Move(fyne.NewPos(size.Width-galleryWidth, 0))
	right.Resize(fyne.NewSize(galleryWidth, size.Height))
	centre.Move(fyne.NewPos(recipeWidth+gap, 0))
	centre.Resize(fyne.NewSize(max(size.Width-recipeWidth-galleryWidth-2*gap, 0), size.Height))
}

// MinSize is fixed: the regions scroll or truncate inside their widths.
func (regionsLayout) MinSize([]fyne.CanvasObject) fyne.Size {
	return fyne.NewSize(recipeWidth+galleryWidth+canvasMinWidth+2*theme.Padding(), windowMinHeight)
}
