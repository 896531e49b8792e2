package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"easel/app"
)

// NewMainWindow builds the main window: the prompt column on the left, the canvas in the middle,
// the memory and GPU-time panels on the right. The panels are empty until the engine lands.
func NewMainWindow(a fyne.App) fyne.Window {
	w := a.NewWindow(app.Name)
	w.SetContent(mainLayout())
	w.Resize(fyne.NewSize(1100, 720))
	return w
}

func mainLayout() fyne.CanvasObject {
	title := widget.NewLabelWithStyle(fmt.Sprintf("%s %s", app.Name, app.Version), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	prompt := widget.NewMultiLineEntry()
	prompt.SetPlaceHolder("Describe the image…")
	prompt.SetMinRowsVisible(5)
	left := container.NewVBox(title, widget.NewLabel("Prompt"), prompt,
		widget.NewLabel("Condition images"), widget.NewLabel("(drop images here — coming soon)"))
	canvasArea := container.NewCenter(widget.NewLabel("No image yet"))
	right := container.NewVBox(widget.NewLabelWithStyle("Memory", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		widget.NewLabel("—"),
		widget.NewLabelWithStyle("GPU time", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		widget.NewLabel("—"))
	inner := container.NewHSplit(canvasArea, right)
	inner.Offset = 0.72
	split := container.NewHSplit(left, inner)
	split.Offset = 0.3
	return split
}
