package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"easel/engine/ml"
)

// timingPanel shows where the compute time goes, per kernel class (gemm, attn, norm, rope, act,
// conv, copy), from the run's events.
type timingPanel struct {
	title *widget.Label
	bars  [ml.NumClasses]*meter
	texts [ml.NumClasses]string
	total *widget.Label
	box   fyne.CanvasObject
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
	rows = append(rows, p.total)
	p.box = container.NewVBox(rows...)
	return p
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
