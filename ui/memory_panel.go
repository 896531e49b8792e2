package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"easel/app/jobs"
	"easel/app/memplan"
	"easel/engine/pipeline"

	"easel/ui/kit"

	"easel/ui/progress"
)

// memoryPanel shows one bar per component against the device budget: before a run the
// prediction for the chosen size and images, during a run the pipeline's ledger.
type memoryPanel struct {
	s       *window
	title   *widget.Label
	rows    *fyne.Container
	verdict *widget.Label
	useSize *widget.Button
	box     fyne.CanvasObject
}

// componentNames are the ledger's network names as the panel says them.
var componentNames = map[string]string{"dit": "Denoiser weights", "te": "Text encoder weights", "vis": "Vision weights", "vae": "VAE weights", "other": "Other weights", "lora": "LoRA weights"}

func newMemoryPanel(s *window) *memoryPanel {
	p := &memoryPanel{s: s, title: kit.Heading("Memory"), rows: container.NewVBox(), verdict: widget.NewLabel("")}
	p.verdict.Wrapping = fyne.TextWrapWord
	p.useSize = widget.NewButton("", nil)
	p.useSize.Hide()
	p.box = container.NewVBox(p.title, p.rows, p.verdict, p.useSize)
	return p
}

// memoryLabelWidth is the bars' label column: a longer name truncates, never widening the panel.
const memoryLabelWidth = 170

// bar is one component: its name and bytes against the budget.
type bar struct {
	name  string
	bytes int64
	over  bool // drawn as over budget
}

func (p *memoryPanel) setBars(bars []bar, budget int64) {
	objs := make([]fyne.CanvasObject, 0, 2*len(bars))
	for _, b := range bars {
		if b.bytes < 500_000 && strings.HasPrefix(b.name, "Other weights") {
			continue
		}
		m := progress.NewMeter()
		share := 0.0
		text := memplan.GB(b.bytes)
		if budget > 0 {
			share = float64(b.bytes) / float64(budget)
			text += fmt.Sprintf(" · %d %%", int(share*100+0.5))
		}
		m.Set(share, text, b.over)
		label := widget.NewLabel(b.name)
		label.Truncation = fyne.TextTruncateEllipsis
		objs = append(objs, kit.LabelledRow(label, memoryLabelWidth, m))
	}
	p.rows.Objects = objs
	p.rows.Refresh()
}

func weightBars(ws []pipeline.ComponentBytes) []bar {
	var out []bar
	for _, w := range ws {
		name := componentNames[w.Name]
		if name == "" {
			name = w.Name + " weights"
		}
		out = append(out, bar{name, w.Bytes, false})
	}
	return out
}

func kvBars(kv []int64) []bar {
	var out []bar
	for i, b := range kv {
		name := "Prompt cache"
		if i == 1 {
			name = "Negative prompt cache"
		}
		out = append(out, bar{name, b, false})
	}
	return out
}

// showPrediction shows the prediction before a run, and whether it fits.
func (p *memoryPanel) showPrediction(pr memplan.Prediction, plan memplan.Plan, g memplan.Geometry) {
	title := fmt.Sprintf("Memory — predicted for %d×%d", plan.Width, plan.Height)
	if n := len(plan.Conditions); n > 0 {
		title += fmt.Sprintf(", %d image(s)", n)
	}
	p.title.SetText(title)
	bars := weightBars(g.Weights)
	if pr.LoRA > 0 {
		bars = append(bars, bar{"LoRAs", pr.LoRA, false})
	}
	bars = append(bars, kvBars(pr.PrefixKV)...)
	bars = append(bars, bar{"Activations", pr.Activations, false}, bar{"VAE activations", pr.VAE, false})
	peak := "Peak"
	if s := pr.Largest(); s.Name != "" {
		peak = "Peak: " + s.Name // the stage at the peak, short enough for the label column
	}
	bars = append(bars, bar{peak, pr.Peak, !pr.Fits()})
	p.setBars(bars, pr.Budget)
	if p.s.strip != nil {
		p.s.strip.showPeak("Predicted", pr.Peak, pr.Budget, !pr.Fits())
	}
	p.useSize.Hide()
	budget := p.budgetName(pr.Budget)
	switch {
	case pr.Budget <= 0:
		p.verdict.SetText(fmt.Sprintf("Peak about %s; the device budget is unknown here, so nothing is refused.", memplan.GB(pr.Peak)))
	case pr.Fits():
		p.verdict.SetText(fmt.Sprintf("Fits: peak about %s of %s usable (%s, %d %% kept for the system).", memplan.GB(pr.Peak), memplan.GB(pr.Usable()), budget, int(memplan.Reserve*100)))
	default:
		msg := fmt.Sprintf("Does not fit: this %s; Generate stays off so the machine does not swap.", pr.Explain())
		if w, h, ok := memplan.LargestFitting(g, plan, pr.Budget); ok {
			msg += fmt.Sprintf(" The largest size of this shape that fits is %d×%d.", w, h)
			p.useSize.SetText(fmt.Sprintf("Use %d×%d", w, h))
			p.useSize.OnTapped = func() { p.s.useCustomSize(w, h) }
			p.useSize.Show()
		} else if len(plan.Conditions) > 0 {
			msg += " Even a small image does not fit with these condition images: remove some, or turn CFG off."
		} else {
			msg += " Even a small image does not fit: the model's weights alone are too large for this machine."
		}
		p.verdict.SetText(msg)
	}
	if g.Estimated {
		p.verdict.SetText(p.verdict.Text + " (Weights estimated for the published model until one is chosen.)")
	}
}

func (p *memoryPanel) budgetName(budget int64) string {
	if p.s.draft().Backend == "cpu" || !hasMetal {
		return memplan.GB(budget) + " physical memory"
	}
	return memplan.GB(budget) + " GPU working set (estimated)"
}

// showError says why no prediction can be made (no size).
func (p *memoryPanel) showError(err error) {
	p.title.SetText("Memory")
	p.setBars(nil, 0)
	p.useSize.Hide()
	p.verdict.SetText(err.Error())
	if p.s.strip != nil {
		p.s.strip.memory.Set(0, "no prediction", false)
	}
}

// showLedger shows the running job's live ledger beside the peak predicted when it was queued.
func (p *memoryPanel) showLedger(m pipeline.Memory, j jobs.Job, predictedPeak int64) {
	p.title.SetText(fmt.Sprintf("Memory — live, job %d", j.ID))
	bars := weightBars(m.Weights)
	bars = append(bars, kvBars(m.PrefixKV)...)
	bars = append(bars, bar{"Activations (estimate)", m.Activations, false})
	if predictedPeak > 0 {
		bars = append(bars, bar{"Predicted peak", predictedPeak, false})
	}
	if m.PeakRSS > 0 {
		bars = append(bars, bar{"Peak resident (measured)", m.PeakRSS, m.DeviceBudget > 0 && m.PeakRSS > m.DeviceBudget})
	}
	p.setBars(bars, m.DeviceBudget)
	if p.s.strip != nil {
		peak := m.PeakRSS
		if peak == 0 {
			peak = predictedPeak
		}
		p.s.strip.showPeak("Live", peak, m.DeviceBudget, m.DeviceBudget > 0 && m.PeakRSS > m.DeviceBudget)
	}
	p.useSize.Hide()
	p.verdict.SetText(fmt.Sprintf("Predicted peak before the run: %s. Go heap now %s; budget %s.",
		memplan.GB(predictedPeak), memplan.GB(m.GoHeap), memplan.GB(m.DeviceBudget)))
}

// useCustomSize switches the draft to a custom size (the memory panel's suggestion).
func (s *window) useCustomSize(w, h int) {
	s.model.SetCustomSize(w, h)
	s.draftChanged()
}
