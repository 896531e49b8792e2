package progress

import (
	"fmt"
	"image/color"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// StepChart draws the wall time of every finished denoising step as a bar, so a run that slows
// down as the machine heats up (or as other apps compete) shows it instead of hiding it in a mean.
type StepChart struct {
	widget.BaseWidget
	times []time.Duration
}

// NewStepChart is an empty chart.
func NewStepChart() *StepChart {
	c := &StepChart{}
	c.ExtendBaseWidget(c)
	return c
}

// Set replaces the step times.
func (c *StepChart) Set(times []time.Duration) {
	c.times = append(c.times[:0], times...)
	c.Refresh()
}

// Summary is the chart's caption: fastest, slowest and the last step.
func (c *StepChart) Summary() string {
	if len(c.times) == 0 {
		return "Per-step time appears here during a run."
	}
	lo, hi, slowest := c.times[0], c.times[0], 1
	for i, d := range c.times {
		lo = min(lo, d)
		if d > hi {
			hi, slowest = d, i+1
		}
	}
	return fmt.Sprintf("Per step: %.1f–%.1f s (slowest: step %d; last %.1f s)", lo.Seconds(), hi.Seconds(), slowest, c.times[len(c.times)-1].Seconds())
}

func (c *StepChart) CreateRenderer() fyne.WidgetRenderer {
	r := &stepChartRenderer{c: c, bg: canvas.NewRectangle(color.Transparent)}
	r.Refresh()
	return r
}

type stepChartRenderer struct {
	c    *StepChart
	bg   *canvas.Rectangle
	bars []*canvas.Rectangle
}

func (r *stepChartRenderer) Layout(size fyne.Size) {
	r.bg.Resize(size)
	n := len(r.bars)
	if n == 0 {
		return
	}
	var hi time.Duration
	for _, d := range r.c.times {
		hi = max(hi, d)
	}
	gap := float32(1)
	w := max((size.Width-gap*float32(n-1))/float32(n), 1)
	for i, b := range r.bars {
		h := size.Height
		if hi > 0 {
			h = max(size.Height*float32(r.c.times[i])/float32(hi), 1)
		}
		b.Resize(fyne.NewSize(w, h))
		b.Move(fyne.NewPos(float32(i)*(w+gap), size.Height-h))
	}
}

func (r *stepChartRenderer) MinSize() fyne.Size { return fyne.NewSize(100, 36) }

func (r *stepChartRenderer) Refresh() {
	v := fyne.CurrentApp().Settings().ThemeVariant()
	r.bg.FillColor = theme.Current().Color(theme.ColorNameInputBackground, v)
	fill := theme.Current().Color(theme.ColorNamePrimary, v)
	for len(r.bars) < len(r.c.times) {
		r.bars = append(r.bars, canvas.NewRectangle(fill))
	}
	r.bars = r.bars[:len(r.c.times)]
	for _, b := range r.bars {
		b.FillColor = fill
	}
	r.Layout(r.c.Size())
	canvas.Refresh(r.c)
}

func (r *stepChartRenderer) Objects() []fyne.CanvasObject {
	objs := []fyne.CanvasObject{r.bg}
	for _, b := range r.bars {
		objs = append(objs, b)
	}
	return objs
}

func (r *stepChartRenderer) Destroy() {}
