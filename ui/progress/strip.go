package progress

import (
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"easel/app/memplan"
	"easel/engine/ml"

	"easel/ui/kit"
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

// Strip is the compact line under the canvas: the memory budget as one bar (the peak the
// memory panel shows: predicted before a run, measured during it) and the time per kernel class
// as one stacked bar (the timing panel's); Details opens the full memory and time panels.
type Strip struct {
	Memory  *Meter
	time    *stackedBar
	Details *widget.Button
	Box     fyne.CanvasObject
	memory  *MemoryPanel
	timing  *TimingPanel
	parent  fyne.Window
}

// NewStrip makes the strip for the memory and timing panels, which it follows from then on;
// Details opens them in a dialog over parent.
func NewStrip(memory *MemoryPanel, timing *TimingPanel, parent fyne.Window) *Strip {
	l := &Strip{Memory: NewMeter(), time: newStackedBar(), memory: memory, timing: timing, parent: parent}
	l.Details = widget.NewButton("Details", l.showDetails)
	mem := widget.NewLabel("Memory")
	tm := widget.NewLabel("Time")
	l.Box = container.NewBorder(nil, nil, nil, l.Details,
		container.NewGridWithColumns(2, kit.LabelledRow(mem, 64, l.Memory), kit.LabelledRow(tm, 40, l.time)))
	memory.strip = l
	timing.OnTimes = l.showTimes
	return l
}

// showPeak shows a peak against the budget ("predicted" or "live"); a nil strip shows nothing.
func (l *Strip) showPeak(kind string, peak, budget int64, over bool) {
	if l == nil {
		return
	}
	share := 0.0
	text := fmt.Sprintf("%s %s", kind, memplan.GB(peak))
	if budget > 0 {
		share = float64(peak) / float64(budget)
		text += " of " + memplan.GB(budget)
	}
	if over {
		text += " · does not fit"
	}
	l.Memory.Set(share, text, over)
}

// showTimes shows the run's time per kernel class as one stacked bar.
func (l *Strip) showTimes(t [ml.NumClasses]ml.ClassTime) {
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
func (l *Strip) showDetails() {
	var legend []string
	for c := range ml.NumClasses {
		legend = append(legend, ml.Class(c).String()+": "+classPlain[c])
	}
	key := widget.NewLabel(strings.Join(legend, "\n"))
	key.Importance = widget.LowImportance
	body := container.NewVScroll(container.NewVBox(l.memory.Box, widget.NewSeparator(), l.timing.Box, key))
	d := dialog.NewCustom("Memory and time", "Close", body, l.parent)
	size := l.parent.Canvas().Size()
	d.Resize(fyne.NewSize(min(620, size.Width-40), max(size.Height-80, 300)))
	d.Show()
}
