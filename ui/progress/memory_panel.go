package progress

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
	"easel/ui/model"
)

// MemoryPanel shows one bar per component against the device budget: before a run the
// prediction for the chosen size and images, during a run the pipeline's ledger, while the
// prompt help writes or an upscale is offered theirs. When the draft's size does not fit it
// offers the largest that does, through the model's SetCustomSize.
type MemoryPanel struct {
	m       *model.Window
	Title   *widget.Label
	rows    *fyne.Container
	Verdict *widget.Label
	UseSize *widget.Button
	Box     fyne.CanvasObject
	strip   *Strip // the strip under the canvas, told each peak shown (nil: none)
}

// componentNames are the ledger's network names as the panel says them.
var componentNames = map[string]string{"dit": "Denoiser weights", "te": "Text encoder weights", "vis": "Vision weights", "vae": "VAE weights", "other": "Other weights", "lora": "LoRA weights"}

// NewMemoryPanel makes the panel for the window model m (its draft's backend names the budget).
func NewMemoryPanel(m *model.Window) *MemoryPanel {
	p := &MemoryPanel{m: m, Title: kit.Heading("Memory"), rows: container.NewVBox(), Verdict: widget.NewLabel("")}
	p.Verdict.Wrapping = fyne.TextWrapWord
	p.UseSize = widget.NewButton("", nil)
	p.UseSize.Hide()
	p.Box = container.NewVBox(p.Title, p.rows, p.Verdict, p.UseSize)
	return p
}

// MemoryLabelWidth is the bars' label column: a longer name truncates, never widening the panel
// (the timing panel's rows line up with it).
const MemoryLabelWidth = 170

// bar is one component: its name and bytes against the budget.
type bar struct {
	name  string
	bytes int64
	over  bool // drawn as over budget
}

func (p *MemoryPanel) setBars(bars []bar, budget int64) {
	objs := make([]fyne.CanvasObject, 0, 2*len(bars))
	for _, b := range bars {
		if b.bytes < 500_000 && strings.HasPrefix(b.name, "Other weights") {
			continue
		}
		m := NewMeter()
		share := 0.0
		text := memplan.GB(b.bytes)
		if budget > 0 {
			share = float64(b.bytes) / float64(budget)
			text += fmt.Sprintf(" · %d %%", int(share*100+0.5))
		}
		m.Set(share, text, b.over)
		label := widget.NewLabel(b.name)
		label.Truncation = fyne.TextTruncateEllipsis
		objs = append(objs, kit.LabelledRow(label, MemoryLabelWidth, m))
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

// ShowPrediction shows the prediction before a run, and whether it fits.
func (p *MemoryPanel) ShowPrediction(pr memplan.Prediction, plan memplan.Plan, g memplan.Geometry) {
	title := fmt.Sprintf("Memory — predicted for %d×%d", plan.Width, plan.Height)
	if n := len(plan.Conditions); n > 0 {
		title += fmt.Sprintf(", %d image(s)", n)
	}
	p.Title.SetText(title)
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
	p.strip.showPeak("Predicted", pr.Peak, pr.Budget, !pr.Fits())
	p.UseSize.Hide()
	budget := p.budgetName(pr.Budget)
	switch {
	case pr.Budget <= 0:
		p.Verdict.SetText(fmt.Sprintf("Peak about %s; the device budget is unknown here, so nothing is refused.", memplan.GB(pr.Peak)))
	case pr.Fits():
		p.Verdict.SetText(fmt.Sprintf("Fits: peak about %s of %s usable (%s, %d %% kept for the system).", memplan.GB(pr.Peak), memplan.GB(pr.Usable()), budget, int(memplan.Reserve*100)))
	default:
		msg := fmt.Sprintf("Does not fit: this %s; Generate stays off so the machine does not swap.", pr.Explain())
		if w, h, ok := memplan.LargestFitting(g, plan, pr.Budget); ok {
			msg += fmt.Sprintf(" The largest size of this shape that fits is %d×%d.", w, h)
			p.UseSize.SetText(fmt.Sprintf("Use %d×%d", w, h))
			p.UseSize.OnTapped = func() { p.m.SetCustomSize(w, h) }
			p.UseSize.Show()
		} else if len(plan.Conditions) > 0 {
			msg += " Even a small image does not fit with these condition images: remove some, or turn CFG off."
		} else {
			msg += " Even a small image does not fit: the model's weights alone are too large for this machine."
		}
		p.Verdict.SetText(msg)
	}
	if g.Estimated {
		p.Verdict.SetText(p.Verdict.Text + " (Weights estimated for the published model until one is chosen.)")
	}
}

func (p *MemoryPanel) budgetName(budget int64) string {
	if p.m.Draft().Backend == "cpu" || !hasMetal {
		return memplan.GB(budget) + " physical memory"
	}
	return memplan.GB(budget) + " GPU working set (estimated)"
}

// ShowError says why no prediction can be made (no size).
func (p *MemoryPanel) ShowError(err error) {
	p.Title.SetText("Memory")
	p.setBars(nil, 0)
	p.UseSize.Hide()
	p.Verdict.SetText(err.Error())
	if p.strip != nil {
		p.strip.Memory.Set(0, "no prediction", false)
	}
}

// ShowLedger shows the running job's live ledger beside the peak predicted when it was queued.
func (p *MemoryPanel) ShowLedger(m pipeline.Memory, j jobs.Job, predictedPeak int64) {
	p.Title.SetText(fmt.Sprintf("Memory — live, job %d", j.ID))
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
	peak := m.PeakRSS
	if peak == 0 {
		peak = predictedPeak
	}
	p.strip.showPeak("Live", peak, m.DeviceBudget, m.DeviceBudget > 0 && m.PeakRSS > m.DeviceBudget)
	p.UseSize.Hide()
	p.Verdict.SetText(fmt.Sprintf("Predicted peak before the run: %s. Go heap now %s; budget %s.",
		memplan.GB(predictedPeak), memplan.GB(m.GoHeap), memplan.GB(m.DeviceBudget)))
}
