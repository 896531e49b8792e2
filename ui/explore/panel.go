package explore

import (
	"fmt"
	"image"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/compose"
	"easel/app/grid"
	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/memplan"
	"easel/engine/pipeline"

	"easel/ui/gallery"
	"easel/ui/model"
)

// Shell is what the region asks of the window's shell. Every function is called on the UI
// goroutine; Save's done is too.
type Shell struct {
	// JobDraft is the draft as Generate would run it (with the canvas's start image, mask and
	// extension).
	JobDraft func() compose.Draft
	// Predict is the memory a run of the draft making count images at once would take (an error
	// when the draft cannot run).
	Predict func(count int) (memplan.Prediction, error)
	// StepTime is the latest run's mean step time (0 before any).
	StepTime func() time.Duration
	// Submit queues job (made from d, its request req with the grid's cells) under label and
	// records it in the model.
	Submit func(d compose.Draft, job compose.Job, req pipeline.Request, label string) (jobs.ID, error)
	// Cancel stops a job.
	Cancel func(jobs.ID)
	// Save writes a picture into the history off the UI goroutine and lists it; done hears the
	// entry or the error. A picture of job id (0: none) that could not be saved is kept by the
	// shell, which offers another folder, before done hears the error.
	Save func(id jobs.ID, img *image.NRGBA, set *imagefile.Settings, done func(history.Entry, error))
	// Restore fills the recipe from a saved picture's settings.
	Restore func(history.Entry)
	// Vary and SecondPass are the batch region's Vary, Refine (factor 1) and Upscale on a cell,
	// from the cell's own draft.
	Vary       func(c *gallery.Cell, d compose.Draft, strength float64)
	SecondPass func(c *gallery.Cell, d compose.Draft, factor float64)
	// ShowGrid brings the grid into the centre.
	ShowGrid func()
	// Queued says a grid's jobs were queued (the shell's buttons follow the queue).
	Queued func()
	// Canvas is where a cell's menu pops up; RandomSeed a new random seed; Now the time.
	Canvas     func() fyne.Canvas
	RandomSeed func() uint64
	Now        func() time.Time
}

// Panel is the Explore section: the axes picked from menus with their values typed (the range
// syntax shown), the cell count and the planner's predicted memory and time before starting, and
// the grid (Sheet) filling in the centre as the cells finish. Box is the section's content,
// Sheet.Box the grid's view for the centre.
type Panel struct {
	Box   *fyne.Container
	Sheet *Sheet

	model  *model.Window
	shell  Shell
	kinds  [3]*widget.Select
	values [3]*widget.Entry
	info   *widget.Label
	start  *widget.Button
	run    *exploration // the grid being made, or the latest one
	ready  bool         // every control is built
}

// New builds the section over the window's model; it follows the draft and the canvas.
func New(m *model.Window, sh Shell) *Panel {
	p := &Panel{model: m, shell: sh, info: widget.NewLabel("")}
	p.Sheet = newSheet(p)
	p.info.Wrapping = fyne.TextWrapWord
	rows := container.NewVBox()
	for i := range 3 {
		p.kinds[i] = widget.NewSelect(axisChoices(m.Draft()), func(string) { p.Refresh() })
		p.kinds[i].SetSelected(NoAxis)
		p.values[i] = widget.NewEntry()
		p.values[i].SetPlaceHolder("1-4, or 2,4,6")
		p.values[i].OnChanged = func(string) { p.Refresh() }
		rows.Add(container.NewBorder(nil, nil, container.NewHBox(widget.NewLabel(grid.Labels[i]), p.kinds[i]), nil, p.values[i]))
	}
	hint := widget.NewLabel("Values: " + grid.Syntax + ". A prompt's {a|b|c} makes an axis of its own.")
	hint.Wrapping, hint.Importance = fyne.TextWrapWord, widget.LowImportance
	p.start = widget.NewButtonWithIcon("Explore", theme.GridIcon(), p.Explore)
	p.Box = container.NewVBox(widget.NewLabelWithStyle("Explore", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), rows, hint, p.info, p.start)
	p.ready = true
	m.Observe(model.DraftChanged|model.CanvasChanged, func(model.Change) { p.Refresh() })
	p.Refresh()
	return p
}

// SetAxis chooses axis i (0 X, 1 Y, 2 Z) by its grid name ("seed", "lora:ink"; "" for none)
// and types its values, as the artist would.
func (p *Panel) SetAxis(i int, name, values string) {
	if name == "" {
		p.kinds[i].SetSelected(NoAxis)
	} else {
		p.kinds[i].SetSelected(AxisLabel(name))
	}
	p.values[i].SetText(values)
}

// Info is what the section says under the axes: the cell count and predictions, or what is wrong.
func (p *Panel) Info() string { return p.info.Text }

// Button is the Explore button.
func (p *Panel) Button() *widget.Button { return p.start }

// Choices are axis i's menu entries.
func (p *Panel) Choices(i int) []string { return p.kinds[i].Options }

// parse reads the axes against the draft; nil with the sentence when they are wrong or empty.
func (p *Panel) parse() (*grid.Grid, error) {
	var kinds, values [3]string
	for i := range 3 {
		kinds[i], values[i] = p.kinds[i].Selected, p.values[i].Text
	}
	return parseAxes(kinds, values, p.model.Draft(), p.model.Canvas().Start != nil)
}

// base is the draft as a grid cell's starting settings.
func (p *Panel) base(seed uint64) grid.Setup {
	d := p.model.Draft()
	b := grid.Setup{Prompt: d.Prompt, Seed: seed, Steps: d.Steps, CFG: d.CFG, VariationStrength: d.VariationStrength}
	if doc := p.model.Canvas(); doc.Start != nil {
		b.Strength = doc.Strength
	}
	for _, l := range d.LoRAs {
		if l.Enabled {
			b.LoRAs = append(b.LoRAs, grid.LoRAWeight{Name: loraName(l), Weight: l.Strength})
		}
	}
	return b
}

// Refresh shows the cell count, the prefills, and the planner's figures: the peak memory of the
// largest group (it holds its finished cells, as a batch does) and the time at the last measured
// step time. The model's draft and canvas changes call it.
func (p *Panel) Refresh() {
	if !p.ready {
		return
	}
	if choices := axisChoices(p.model.Draft()); len(choices) != len(p.kinds[0].Options) {
		for _, k := range p.kinds {
			k.Options = choices
		}
	}
	g, err := p.parse()
	if err != nil {
		p.info.SetText(err.Error())
		p.start.Disable()
		return
	}
	draftSteps := p.model.Draft().Steps
	groups := g.Plan(p.base(p.model.Draft().Seed))
	largest, steps := 0, 0
	for _, gr := range groups {
		largest = max(largest, len(gr.Cells))
		for _, c := range gr.Cells {
			n := g.Apply(c, p.base(0)).Steps
			if n == 0 {
				n = draftSteps
			}
			steps += max(n, 1)
		}
	}
	text := fmt.Sprintf("%d cells (%d × %d × %d) in %d prefill(s).", g.Count(), g.Dims()[0], g.Dims()[1], g.Dims()[2], len(groups))
	fits := true
	if pr, err := p.shell.Predict(largest); err == nil {
		fits = pr.Fits()
		text += fmt.Sprintf(" Peak memory about %s.", memplan.GB(pr.Peak))
		if !fits {
			text += " That does not fit: " + pr.Explain() + "."
		}
	}
	if t := p.shell.StepTime(); t > 0 {
		text += fmt.Sprintf(" About %s at %.1f s a step (the last run's).", (time.Duration(steps) * t).Round(time.Second), t.Seconds())
	} else {
		text += fmt.Sprintf(" %d steps in all; the time is predicted once a run has measured a step.", steps)
	}
	p.info.SetText(text)
	if fits {
		p.start.Enable()
	} else {
		p.start.Disable()
	}
}
