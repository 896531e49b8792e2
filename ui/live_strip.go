package ui

import (
	"fmt"
	"image/color"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/memplan"
	"easel/engine/ml"

	"easel/ui/kit"

	"easel/ui/progress"
)

// classPlain says what each kernel class is, for people who do not write kernels.
var classPlain = [ml.NumClasses]string{
	"matrix multiplies (the model's layers)",
	"attention (how the image looks at the prompt and itself)",
	"normalisation",
	"position encoding",
	"activations and element-wise arithmetic",
	"convolutions (the image decoder)",
	"memory copies and uploads",
}

// classColours are the stacked bar's colours, one per kernel class.
var classColours = [ml.NumClasses]color.NRGBA{
	{0x4e, 0x79, 0xa7, 0xff}, {0xf2, 0x8e, 0x2b, 0xff}, {0x59, 0xa1, 0x4f, 0xff}, {0xb0, 0x7a, 0xa1, 0xff},
	{0xed, 0xc9, 0x48, 0xff}, {0x76, 0xb7, 0xb2, 0xff}, {0x9c, 0x75, 0x5f, 0xff},
}

// liveStrip is the compact line under the canvas: the memory budget as one bar (the predicted
// peak before a run, the measured one during it) and the time per kernel class as one stacked
// bar; Details opens the full memory and time panels.
type liveStrip struct {
	s       *window
	memory  *progress.Meter
	time    *stackedBar
	details *widget.Button
	box     fyne.CanvasObject
}

func newLiveStrip(s *window) *liveStrip {
	l := &liveStrip{s: s, memory: progress.NewMeter(), time: newStackedBar()}
	l.details = widget.NewButton("Details", l.showDetails)
	mem := widget.NewLabel("Memory")
	tm := widget.NewLabel("Time")
	l.box = container.NewBorder(nil, nil, nil, l.details,
		container.NewGridWithColumns(2, kit.LabelledRow(mem, 64, l.memory), kit.LabelledRow(tm, 40, l.time)))
	return l
}

// showPeak shows a peak against the budget ("predicted" or "live").
func (l *liveStrip) showPeak(kind string, peak, budget int64, over bool) {
	share := 0.0
	text := fmt.Sprintf("%s %s", kind, memplan.GB(peak))
	if budget > 0 {
		share = float64(peak) / float64(budget)
		text += " of " + memplan.GB(budget)
	}
	if over {
		text += " · does not fit"
	}
	l.memory.Set(share, text, over)
}

// showTimes shows the run's time per kernel class as one stacked bar.
func (l *liveStrip) showTimes(t [ml.NumClasses]ml.ClassTime) {
	var total time.Duration
	for _, c := range t {
		total += c.Time
	}
	var shares [ml.NumClasses]float64
	if total > 0 {
		for c := range t {
			shares[c] = t[c].Time.Seconds() / total.Seconds()
		}
	}
	text := "no run yet"
	if total > 0 {
		text = fmt.Sprintf("%.1f s in kernels", total.Seconds())
	}
	l.time.set(shares, text)
}

// showDetails opens the full memory and time panels, which stay live while open.
func (l *liveStrip) showDetails() {
	s := l.s
	var legend []string
	for c := range ml.NumClasses {
		legend = append(legend, ml.Class(c).String()+": "+classPlain[c])
	}
	key := widget.NewLabel(strings.Join(legend, "\n"))
	key.Importance = widget.LowImportance
	body := container.NewVScroll(container.NewVBox(s.memory.box, widget.NewSeparator(), s.timing.Box, key))
	d := dialog.NewCustom("Memory and time", "Close", body, s.win)
	size := s.win.Canvas().Size()
	d.Resize(fyne.NewSize(min(620, size.Width-40), max(size.Height-80, 300)))
	d.Show()
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
	r.label.Text = progress.FitText(r.b.text, r.label.TextSize, size.Width-2*theme.Padding())
	ts := r.label.MinSize()
	r.label.Move(fyne.NewPos(theme.Padding(), (size.Height-ts.Height)/2))
	r.label.Resize(ts)
}

func (r *stackedRenderer) MinSize() fyne.Size {
	return fyne.NewSize(progress.MeterMinWidth, r.label.MinSize().Height+theme.Padding())
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
