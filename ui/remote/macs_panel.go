package remote

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	macs "easel/app/studio"
)

// MacsPanel is the Studio panel: the Macs of a studio (name, chip, model, state, the job and
// step, images done), how many images wait, and one line when a Mac leaves mid-job.
type MacsPanel struct {
	rows    *fyne.Container
	summary *widget.Label
	left    *widget.Label
	prev    []macs.WorkerStatus
	Box     *fyne.Container
}

// NewMacsPanel is the panel before any status came.
func NewMacsPanel() *MacsPanel {
	p := &MacsPanel{rows: container.NewVBox(), summary: widget.NewLabel("No studio yet"), left: widget.NewLabel("")}
	p.left.Wrapping = fyne.TextWrapWord
	p.Box = container.NewVBox(widget.NewLabelWithStyle("Macs", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), p.rows, p.summary, p.left)
	return p
}

// Show puts a status on the panel; a Mac that was rendering and is gone is said in one line.
func (p *MacsPanel) Show(st *macs.Status) {
	p.rows.RemoveAll()
	for _, w := range st.Workers {
		p.rows.Add(widget.NewLabel(macLine(w)))
	}
	p.summary.SetText(fmt.Sprintf("%d Macs, %d images waiting", len(st.Workers), st.Queued))
	if lines := leftMidJob(p.prev, st.Workers); len(lines) > 0 {
		p.left.SetText(strings.Join(lines, "\n"))
	}
	p.prev = st.Workers
}

// macLine is one Mac's row.
func macLine(w macs.WorkerStatus) string {
	parts := []string{w.Name}
	if w.Chip != "" {
		parts = append(parts, w.Chip)
	}
	parts = append(parts, w.Model)
	state := "idle"
	if w.State == macs.StateRendering {
		state = fmt.Sprintf("rendering %s, step %d of %d", w.Job, w.Step, w.Steps)
		if w.Attempt > 1 {
			state += fmt.Sprintf(" (attempt %d)", w.Attempt)
		}
	}
	parts = append(parts, state, fmt.Sprintf("%d done", w.Done))
	return strings.Join(parts, " · ")
}

// leftMidJob are the lines for the Macs that were rendering in prev and are gone from cur.
func leftMidJob(prev, cur []macs.WorkerStatus) []string {
	here := map[string]bool{}
	for _, w := range cur {
		here[w.Name] = true
	}
	var out []string
	for _, w := range prev {
		if !here[w.Name] && w.State == macs.StateRendering {
			out = append(out, fmt.Sprintf("%s left while rendering %s; the image goes to another Mac.", w.Name, w.Job))
		}
	}
	return out
}

// Summary is the panel's count line ("3 Macs, 2 images waiting").
func (p *MacsPanel) Summary() string { return p.summary.Text }

// Rows are the Macs' lines, one per Mac.
func (p *MacsPanel) Rows() []string {
	var out []string
	for _, o := range p.rows.Objects {
		if l, ok := o.(*widget.Label); ok {
			out = append(out, l.Text)
		}
	}
	return out
}

// Left is the line about Macs that left mid-job ("" when none did).
func (p *MacsPanel) Left() string { return p.left.Text }
