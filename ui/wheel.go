package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// wheelToColumn lies over the recipe column and sends the mouse wheel to the column's scroll,
// wherever the pointer is: a text field's own scroll no longer takes the wheel and stops the
// column. It takes nothing else (no taps, hovers or drags), so the fields under it work as before.
type wheelToColumn struct {
	widget.BaseWidget
	column *container.Scroll
}

func newWheelToColumn(column *container.Scroll) *wheelToColumn {
	w := &wheelToColumn{column: column}
	w.ExtendBaseWidget(w)
	return w
}

// Scrolled scrolls the column.
func (w *wheelToColumn) Scrolled(ev *fyne.ScrollEvent) { w.column.Scrolled(ev) }

func (w *wheelToColumn) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(canvas.NewRectangle(color.Transparent))
}

// MinSize is nothing: the column decides the size.
func (w *wheelToColumn) MinSize() fyne.Size { return fyne.Size{} }
