package progress

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/ui/kit"
)

// Meter is a horizontal bar with its value written on it: a grey track, a filled share, and a
// text. Unlike widget.ProgressBar, an empty meter looks empty in the dark theme.
type Meter struct {
	widget.BaseWidget
	value float64 // 0…1
	text  string
	warn  bool // drawn in the error colour (over budget)
}

// MeterMinWidth keeps a panel of meters from widening the window with long texts.
const MeterMinWidth = 110

// NewMeter is an empty meter.
func NewMeter() *Meter {
	m := &Meter{}
	m.ExtendBaseWidget(m)
	return m
}

// Text is what the meter says.
func (m *Meter) Text() string { return m.text }

// Set updates the share and the text.
func (m *Meter) Set(value float64, text string, warn bool) {
	m.value, m.text, m.warn = min(max(value, 0), 1), text, warn
	m.Refresh()
}

func (m *Meter) CreateRenderer() fyne.WidgetRenderer {
	r := &meterRenderer{m: m, track: canvas.NewRectangle(color.Transparent), fill: canvas.NewRectangle(color.Transparent),
		label: canvas.NewText("", color.White)}
	r.track.CornerRadius = 3
	r.fill.CornerRadius = 3
	r.label.TextSize = theme.CaptionTextSize()
	r.Refresh()
	return r
}

type meterRenderer struct {
	m     *Meter
	track *canvas.Rectangle
	fill  *canvas.Rectangle
	label *canvas.Text
}

func (r *meterRenderer) Layout(size fyne.Size) {
	r.track.Resize(size)
	r.track.Move(fyne.NewPos(0, 0))
	w := float32(r.m.value) * size.Width
	if r.m.value > 0 && w < 2 {
		w = 2 // a sliver, so a small but non-zero share is visible
	}
	r.fill.Resize(fyne.NewSize(w, size.Height))
	r.fill.Move(fyne.NewPos(0, 0))
	r.label.Text = kit.FitText(r.m.text, r.label.TextSize, size.Width-2*theme.Padding())
	ts := r.label.MinSize()
	r.label.Move(fyne.NewPos(theme.Padding(), (size.Height-ts.Height)/2))
	r.label.Resize(ts)
}

func (r *meterRenderer) MinSize() fyne.Size {
	ts := r.label.MinSize()
	return fyne.NewSize(MeterMinWidth, ts.Height+theme.Padding())
}

func (r *meterRenderer) Refresh() {
	v := fyne.CurrentApp().Settings().ThemeVariant()
	th := theme.Current()
	r.track.FillColor = th.Color(theme.ColorNameInputBackground, v)
	if r.m.warn {
		r.fill.FillColor = th.Color(theme.ColorNameError, v)
	} else {
		r.fill.FillColor = th.Color(theme.ColorNamePrimary, v)
	}
	r.label.Color = th.Color(theme.ColorNameForeground, v)
	r.label.Text = r.m.text
	r.Layout(r.m.Size())
	canvas.Refresh(r.m)
}

func (r *meterRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{r.track, r.fill, r.label}
}

func (r *meterRenderer) Destroy() {}
