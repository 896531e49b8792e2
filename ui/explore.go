package ui

import (
	"fmt"
	"image"
	"path/filepath"
	"strings"
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

	"easel/ui/model"

	"easel/ui/canvasarea"
)

// noAxis is the axis menus' "not used" choice.
const noAxis = "—"

// explorePanel is the "Explore" section: up to three axes picked from a menu with their values
// typed (the range syntax shown), the cell count and the planner's predicted time and memory
// before starting, and the grid (exploreSheet) filling live as the cells finish.
type explorePanel struct {
	s      *window
	kinds  [3]*widget.Select
	values [3]*widget.Entry
	info   *widget.Label
	start  *widget.Button
	sheet  *exploreSheet
	box    *fyne.Container
	ready  bool // every control is built
}

func newExplorePanel(s *window) *explorePanel {
	p := &explorePanel{s: s, info: widget.NewLabel(""), sheet: newExploreSheet(s)}
	p.info.Wrapping = fyne.TextWrapWord
	rows := container.NewVBox()
	for i := range 3 {
		p.kinds[i] = widget.NewSelect(p.axisChoices(), func(string) { p.refresh() })
		p.kinds[i].SetSelected(noAxis)
		p.values[i] = widget.NewEntry()
		p.values[i].SetPlaceHolder("1-4, or 2,4,6")
		p.values[i].OnChanged = func(string) { p.refresh() }
		rows.Add(container.NewBorder(nil, nil, container.NewHBox(widget.NewLabel(grid.Labels[i]), p.kinds[i]), nil, p.values[i]))
	}
	hint := widget.NewLabel("Values: " + grid.Syntax + ". A prompt's {a|b|c} makes an axis of its own.")
	hint.Wrapping, hint.Importance = fyne.TextWrapWord, widget.LowImportance
	p.start = widget.NewButtonWithIcon("Explore", theme.GridIcon(), p.explore)
	p.box = container.NewVBox(widget.NewLabelWithStyle("Explore", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), rows, hint, p.info, p.start)
	p.ready = true
	p.refresh()
	return p
}

// axisWords are the axes as the menus name them, in words, for the grid's own names.
var axisWords = map[string]string{"seed": "Seed", "steps": "Steps", "cfg": "CFG scale", "strength": "Strength",
	"variation-strength": "Variation strength", "prompt-sr": "Prompt: replace words", "size": "Size", "hires": "Upscale (hires)"}

// loraAxisWords starts a LoRA weight axis's menu entry.
const loraAxisWords = "LoRA weight: "

// axisLabel is an axis's menu entry for the grid's name of it ("seed" → "Seed", "lora:ink" →
// "LoRA weight: ink").
func axisLabel(name string) string {
	if l, ok := axisWords[name]; ok {
		return l
	}
	if n, ok := strings.CutPrefix(name, "lora:"); ok {
		return loraAxisWords + n
	}
	return name
}

// axisName is the grid's name of a menu entry (axisLabel's inverse).
func axisName(label string) string {
	for n, l := range axisWords {
		if l == label {
			return n
		}
	}
	if n, ok := strings.CutPrefix(label, loraAxisWords); ok {
		return "lora:" + n
	}
	return label
}

// axisChoices are the axes in words, with a LoRA weight axis for each enabled LoRA of the draft.
func (p *explorePanel) axisChoices() []string {
	out := []string{noAxis}
	for _, n := range []string{"seed", "steps", "cfg", "strength", "variation-strength", "prompt-sr", "size", "hires"} {
		out = append(out, axisLabel(n))
	}
	for _, l := range p.s.draft().LoRAs {
		if l.Enabled {
			out = append(out, axisLabel("lora:"+loraName(l)))
		}
	}
	return out
}

func loraName(l compose.LoRA) string {
	return strings.TrimSuffix(filepath.Base(l.Path), filepath.Ext(l.Path))
}

// parse reads the axes against the draft; nil with the sentence when they are wrong or empty.
func (p *explorePanel) parse() (*grid.Grid, error) {
	var specs [3]string
	for i := range 3 {
		if k := p.kinds[i].Selected; k != "" && k != noAxis {
			specs[i] = axisName(k) + "=" + p.values[i].Text
		}
	}
	var names []string
	for _, l := range p.s.draft().LoRAs {
		if l.Enabled {
			names = append(names, loraName(l))
		}
	}
	g, err := grid.Parse(specs, grid.Context{Prompt: p.s.draft().Prompt, HasStart: p.s.doc().Start != nil, LoRAs: names})
	if err != nil {
		return nil, err
	}
	if g.Empty() {
		return nil, fmt.Errorf("choose an axis and type its values (or write {a|b} in the prompt)")
	}
	return g, nil
}

// base is the draft as a grid cell's starting settings.
func (p *explorePanel) base(seed uint64) grid.Setup {
	d := p.s.draft()
	b := grid.Setup{Prompt: d.Prompt, Seed: seed, Steps: d.Steps, CFG: d.CFG, VariationStrength: d.VariationStrength}
	if p.s.doc().Start != nil {
		b.Strength = p.s.doc().Strength
	}
	for _, l := range d.LoRAs {
		if l.Enabled {
			b.LoRAs = append(b.LoRAs, grid.LoRAWeight{Name: loraName(l), Weight: l.Strength})
		}
	}
	return b
}

// refresh shows the cell count, the prefills, and the planner's figures: the peak memory of the
// largest group (it holds its finished cells, as a batch does) and the time at the last measured
// step time.
func (p *explorePanel) refresh() {
	if !p.ready {
		return
	}
	if choices := p.axisChoices(); len(choices) != len(p.kinds[0].Options) {
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
	groups := g.Plan(p.base(p.s.draft().Seed))
	largest, steps := 0, 0
	for _, gr := range groups {
		largest = max(largest, len(gr.Cells))
		for _, c := range gr.Cells {
			n := g.Apply(c, p.base(0)).Steps
			if n == 0 {
				n = p.s.draft().Steps
			}
			steps += max(n, 1)
		}
	}
	text := fmt.Sprintf("%d cells (%d × %d × %d) in %d prefill(s).", g.Count(), g.Dims()[0], g.Dims()[1], g.Dims()[2], len(groups))
	plan, err := p.s.memoryPlan()
	fits := true
	if err == nil {
		plan.Count = largest
		pr := memplan.Predict(p.s.deps.Geometry, plan, p.s.deps.Budget)
		fits = pr.Fits()
		text += fmt.Sprintf(" Peak memory about %s.", memplan.GB(pr.Peak))
		if !fits {
			text += " That does not fit: " + pr.Explain() + "."
		}
	}
	if t := p.s.lastStepTime; t > 0 {
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

// exploration is a grid being made: its jobs (one per prefill group), which grid cell each
// job's cell is, the pictures and files so far.
type exploration struct {
	g        *grid.Grid
	batchID  string
	cellOf   map[jobs.ID][]int // job → grid index of each of its cells
	pictures map[int]*image.NRGBA
	sets     map[int]*imagefile.Settings
	paths    map[int]string
	drafts   map[int]compose.Draft // each cell's draft (its own seed, steps, CFG)
	prompt   string
	// stopped is set once one of its jobs failed or was cancelled: the grid is saved with the
	// cells made; gridSaved once it was.
	stopped, gridSaved bool
}

// exploreStopped marks a grid whose job failed or was cancelled: its other jobs are cancelled,
// and the grid is saved with the cells finished (placeholders for the rest) once they are saved.
func (s *window) exploreStopped(j jobs.Job) {
	run := s.exploring
	if run == nil || run.cellOf[j.ID] == nil || run.stopped {
		return
	}
	run.stopped = true
	for id := range run.cellOf {
		if id != j.ID {
			s.queue.Cancel(id)
		}
	}
	if len(run.pictures) > 0 && len(run.paths) == len(run.pictures) {
		s.saveGrid(run)
	}
}

// explore submits the grid: one job per prefill group, each with its cells (Request.Cells).
func (p *explorePanel) explore() {
	s := p.s
	g, err := p.parse()
	if err != nil {
		s.say("Cannot explore: %v", err)
		return
	}
	seed := s.draft().Seed
	if s.draft().RandomSeed {
		seed = randomSeed()
	}
	base := p.base(seed)
	run := &exploration{g: g, batchID: imagefile.NewBatchID(s.now(), uint64(s.model.Live()), seed), cellOf: map[jobs.ID][]int{},
		pictures: map[int]*image.NRGBA{}, sets: map[int]*imagefile.Settings{}, paths: map[int]string{}, drafts: map[int]compose.Draft{}, prompt: s.draft().Prompt}
	variationSeed := s.draft().VariationSeed
	if variationSeed == 0 {
		variationSeed = randomSeed()
	}
	var lastID jobs.ID // the grid's notice ends with its last group's job
	for _, group := range g.Plan(base) {
		d := s.jobDraft()
		d.Prompt, d.Count, d.Seed, d.RandomSeed = group.Setup.Prompt, 1, seed, false
		if group.Setup.Width > 0 {
			d.Size, d.CustomW, d.CustomH, d.Ratio = compose.SizeCustom, group.Setup.Width, group.Setup.Height, 0
		}
		d.LoRAs = append([]compose.LoRA(nil), d.LoRAs...)
		for i, l := range d.LoRAs {
			for _, w := range group.Setup.LoRAs {
				if l.Enabled && loraName(l) == w.Name {
					d.LoRAs[i].Strength = w.Weight
				}
			}
		}
		job, err := d.Job(seed)
		if err != nil {
			s.say("Cannot explore: %v", err)
			return
		}
		req := job.Request
		var index []int
		for _, c := range group.Cells {
			cs := g.Apply(c, base)
			cell := pipeline.Cell{Seed: cs.Seed, Steps: cs.Steps, CFG: cs.CFG, Strength: cs.Strength, VariationStrength: cs.VariationStrength}
			if cell.VariationStrength > 0 {
				cell.VariationSeed = variationSeed
			}
			req.Cells = append(req.Cells, cell)
			index = append(index, c.Index)
			cd := d
			cd.Seed, cd.Steps, cd.CFG, cd.VariationStrength, cd.VariationSeed = cs.Seed, cs.Steps, cs.CFG, cs.VariationStrength, cell.VariationSeed
			run.drafts[c.Index] = cd
		}
		if job.Prepared != nil {
			s.finisher.Expect(req.Init, &job)
		}
		if s.deps.Calibrator != nil {
			req.Preview = s.deps.Calibrator.Render
		} else if s.deps.Projection != nil {
			req.Preview = s.deps.Projection.Image
		}
		id, err := s.queue.Submit(req, fmt.Sprintf("%s · grid of %d", promptLabel(d.Prompt), len(req.Cells))) // each cell has its own seed
		if err != nil {
			s.say("%v", err)
			return
		}
		run.cellOf[id], lastID = index, id
		s.model.Submitted(id, model.JobRecord{Draft: d, Peak: s.prediction.Peak, Where: s.router.Where()})
	}
	s.exploring = run
	p.sheet.begin(run)
	s.area.Show(canvasarea.Grid) // the grid fills the centre as its cells finish
	s.sayAbout(lastID, noticeInfo, "Exploring %d cells.", g.Count())
	s.updateButtons()
}

// exploreEvent takes a grid job's event (the window's onUpdate calls it first): a finished
// cell is saved with the grid's identity (History groups the grid like a batch) and drawn into
// the grid. It reports whether the job was a grid's.
func (s *window) exploreEvent(j jobs.Job, ev pipeline.Event) bool {
	run := s.exploring
	if run == nil || run.cellOf[j.ID] == nil {
		return false
	}
	res := ev.Finished
	if res == nil || res.Index >= len(run.cellOf[j.ID]) {
		return true
	}
	gi := run.cellOf[j.ID][res.Index]
	d := run.drafts[gi]
	set := d.FileSettings(res)
	set.InBatch(run.batchID, gi, run.g.Count())
	img, now := res.Image, s.now()
	run.pictures[gi], run.sets[gi] = img, set
	s.explore.sheet.show()
	s.saveInBackground(s.deps.History, img, set, now, func(e history.Entry, err error) {
		if err != nil {
			s.keep(j.ID, keptImage{img: img, set: set, at: now}, err)
			return
		}
		run.paths[gi] = e.Path
		s.history.AddSession(e)
		if len(run.paths) == run.g.Count() || (run.stopped && len(run.paths) == len(run.pictures)) {
			s.saveGrid(run)
		}
	})
	return true
}

// saveGrid saves the finished grid image(s), with the axes in their settings, to the history.
func (s *window) saveGrid(run *exploration) {
	if run.gridSaved {
		return
	}
	run.gridSaved = true
	names := make([]string, run.g.Count())
	for i, p := range run.paths {
		names[i] = filepath.Base(p)
	}
	for z := range run.g.Dims()[2] {
		img, _, err := run.g.Compose(z, run.pictures)
		if err != nil {
			s.say("The grid image could not be drawn: %v", err)
			return
		}
		var first *imagefile.Settings // the first cell made of this grid: its settings head the grid's
		for i := z * run.g.PerGrid(); i < (z+1)*run.g.PerGrid() && first == nil; i++ {
			first = run.sets[i]
		}
		if first == nil {
			continue // no cell of this Z value was made
		}
		set := *first
		set.Batch, set.Width, set.Height, set.Grid = nil, img.Rect.Dx(), img.Rect.Dy(), run.g.Settings(z, names)
		set.InitImage, set.MaskImage = nil, nil
		s.saveInBackground(s.deps.History, img, &set, s.now(), func(e history.Entry, err error) {
			if err != nil {
				s.say("The grid image could not be saved: %v", err)
				return
			}
			s.history.AddSession(e)
		})
	}
}
