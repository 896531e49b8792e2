package ui

import (
	"fmt"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"easel/engine/ml"
	"easel/engine/pipeline"
)

// timingPanel shows where the compute time goes, per kernel class (gemm, attn, norm, rope, act,
// conv, copy), from the run's events.
type timingPanel struct {
	title *widget.Label
	bars  [ml.NumClasses]*meter
	texts [ml.NumClasses]string
	total *widget.Label
	// steps and stepText chart each denoising step's wall time; stepTimes and lastElapsed
	// collect them from the running job's events.
	steps       *stepChart
	stepText    *widget.Label
	stepTimes   []time.Duration
	lastElapsed time.Duration
	box         fyne.CanvasObject
}

func newTimingPanel() *timingPanel {
	title := "CPU time by kernel class"
	if hasMetal {
		title = "GPU time by kernel class"
	}
	p := &timingPanel{title: heading(title), total: widget.NewLabel("No run yet.")}
	rows := []fyne.CanvasObject{p.title}
	for c := range ml.NumClasses {
		p.bars[c] = newMeter()
		p.texts[c] = "—"
		p.bars[c].set(0, "—", false)
		rows = append(rows, container.NewGridWithColumns(2, widget.NewLabel(ml.Class(c).String()), p.bars[c]))
	}
	p.steps = newStepChart()
	p.stepText = widget.NewLabel(p.steps.Summary())
	p.stepText.Wrapping = fyne.TextWrapWord
	rows = append(rows, p.total, p.steps, p.stepText)
	p.box = container.NewVBox(rows...)
	return p
}

// startRun clears the step chart for a new job.
func (p *timingPanel) startRun() {
	p.stepTimes, p.lastElapsed = nil, 0
	p.steps.set(nil)
	p.stepText.SetText(p.steps.Summary())
}

// observe takes a running job's event: a finished step adds its wall time (the time since the
// previous step, or since denoising started).
func (p *timingPanel) observe(ev pipeline.Event) {
	if ev.Stage != pipeline.StageDenoising {
		return
	}
	if ev.Step > len(p.stepTimes) && ev.Step > 0 {
		p.stepTimes = append(p.stepTimes, ev.Elapsed-p.lastElapsed)
		p.steps.set(p.stepTimes)
		p.stepText.SetText(p.steps.Summary())
	}
	p.lastElapsed = ev.Elapsed
}

// show renders a run's per-class times (share of the total, seconds, ops).
func (p *timingPanel) show(t [ml.NumClasses]ml.ClassTime) {
	var total float64
	for _, c := range t {
		total += c.Time.Seconds()
	}
	for c := range ml.NumClasses {
		sec := t[c].Time.Seconds()
		share := 0.0
		if total > 0 {
			share = sec / total
		}
		p.texts[c] = fmt.Sprintf("%.1f s · %d %%", sec, int(share*100+0.5))
		p.bars[c].set(share, p.texts[c], false)
	}
	p.total.SetText(fmt.Sprintf("%.1f s in kernels so far.", total))
}
