package progress

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/engine/ml"
)

// classColours are the stacked bar's colours, one per kernel class.
var classColours = [ml.NumClasses]color.NRGBA{
	{0x4e, 0x79, 0xa7, 0xff}, {0xf2, 0x8e, 0x2b, 0xff}, {0x59, 0xa1, 0x4f, 0xff}, {0xb0, 0x7a, 0xa1, 0xff},
	{0xed, 0xc9, 0x48, 0xff}, {0x76, 0xb7, 0xb2, 0xff}, {0x9c, 0x75, 0x5f, 0xff},
}

// stackedBar is a horizontal bar split into coloured shares with a text on it.
type stackedBar struct {
	widget.BaseWidget
	shares [ml.NumClasses]float64
	text   string
}

func newStackedBar() *stackedBar {
	b := &stackedBar{text: "no run yet"}
	b.ExtendBaseWidget(b)
	return b
}

func (b *stackedBar) set(shares [ml.NumClasses]float64, text string) {
	b.shares, b.text = shares, text
	b.Refresh()
}

func (b *stackedBar) CreateRenderer() fyne.WidgetRenderer {
	r := &stackedRenderer{b: b, track: canvas.NewRectangle(color.Transparent), label: canvas.NewText("", color.White)}
	r.track.CornerRadius = 3
	for c := range r.parts {
		r.parts[c] = canvas.NewRectangle(classColours[c])
	}
	r.label.TextSize = theme.CaptionTextSize()
	r.Refresh()
	return r
}

type stackedRenderer struct {
	b     *stackedBar
	track *canvas.Rectangle
	parts [ml.NumClasses]*canvas.Rectangle
	label *canvas.Text
}

func (r *stackedRenderer) Layout(size fyne.Size) {
	r.track.Move(fyne.NewPos(0, 0))
	r.track.Resize(size)
	x := float32(0)
	for c, p := range r.parts {
		w := float32(r.b.shares[c]) * size.Width
		p.Move(fyne.NewPos(x, 0))
		p.Resize(fyne.NewSize(w, size.Height))
		x += w
	}
	r.label.Text = FitText(r.b.text, r.label.TextSize, size.Width-2*theme.Padding())
	ts := r.label.MinSize()
	r.label.Move(fyne.NewPos(theme.Padding(), (size.Height-ts.Height)/2))
	r.label.Resize(ts)
}

func (r *stackedRenderer) MinSize() fyne.Size {
	return fyne.NewSize(MeterMinWidth, r.label.MinSize().Height+theme.Padding())
}

func (r *stackedRenderer) Refresh() {
	v := fyne.CurrentApp().Settings().ThemeVariant()
	th := theme.Current()
	r.track.FillColor = th.Color(theme.ColorNameInputBackground, v)
	r.label.Color = th.Color(theme.ColorNameForeground, v)
	r.label.Text = r.b.text
	r.Layout(r.b.Size())
	canvas.Refresh(r.b)
}

func (r *stackedRenderer) Objects() []fyne.CanvasObject {
	objs := []fyne.CanvasObject{r.track}
	for _, p := range r.parts {
		objs = append(objs, p)
	}
	return append(objs, r.label)
}

func (r *stackedRenderer) Destroy() {}
