package explore

import (
	"fmt"
	"image"
	"path/filepath"

	"easel/app/compose"
	"easel/app/grid"
	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/engine/pipeline"

	"easel/ui/kit"
	"easel/ui/model"
)

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
	// stopped is set once one of its jobs failed or was cancelled: the grid is saved with the
	// cells made; gridSaved once it was.
	stopped, gridSaved bool
}

func newExploration(g *grid.Grid, batchID string) *exploration {
	return &exploration{g: g, batchID: batchID, cellOf: map[jobs.ID][]int{}, pictures: map[int]*image.NRGBA{},
		sets: map[int]*imagefile.Settings{}, paths: map[int]string{}, drafts: map[int]compose.Draft{}}
}

// Explore submits the grid: one job per prefill group, each with its cells (Request.Cells). The
// queue rows name the grid, not a seed: each cell has its own.
func (p *Panel) Explore() {
	g, err := p.parse()
	if err != nil {
		p.model.Say(model.NoticeWarning, "Cannot explore: %v", err)
		return
	}
	draft := p.model.Draft()
	seed := draft.Seed
	if draft.RandomSeed {
		seed = p.shell.RandomSeed()
	}
	base := p.base(seed)
	run := newExploration(g, imagefile.NewBatchID(p.shell.Now(), uint64(p.model.Live()), seed))
	variationSeed := draft.VariationSeed
	if variationSeed == 0 {
		variationSeed = p.shell.RandomSeed()
	}
	var lastID jobs.ID // the grid's notice ends with its last group's job
	groups := g.Plan(base)
	for _, group := range groups {
		d := p.groupDraft(group.Setup, seed)
		job, err := d.Job(seed)
		if err != nil {
			p.model.Say(model.NoticeWarning, "Cannot explore: %v", err)
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
		id, err := p.shell.Submit(d, job, req, gridLabel(d.Prompt, len(req.Cells), g.Count(), len(groups)))
		if err != nil {
			p.model.Say(model.NoticeWarning, "%v", err)
			return
		}
		run.cellOf[id], lastID = index, id
	}
	p.run = run
	p.Sheet.begin(run)
	p.shell.ShowGrid() // the grid fills the centre as its cells finish
	p.model.SayAbout(lastID, model.NoticeInfo, "Exploring %d cells.", g.Count())
	p.shell.Queued()
}

// gridLabel is the queue's row for one job of a grid of count cells in groups jobs: the start of
// its prompt and its share of the grid ("grid of 4"; "2 of a grid of 4" when the grid takes
// several jobs), never a seed: each cell has its own.
func gridLabel(prompt string, cells, count, groups int) string {
	if groups == 1 {
		return fmt.Sprintf("%s · grid of %d", kit.PromptLabel(prompt), count)
	}
	return fmt.Sprintf("%s · %d of a grid of %d", kit.PromptLabel(prompt), cells, count)
}

// groupDraft is the job draft of one prefill group: the group's prompt, size and LoRA weights,
// one image from seed (its cells carry their own seeds).
func (p *Panel) groupDraft(setup grid.Setup, seed uint64) compose.Draft {
	d := p.shell.JobDraft()
	d.Prompt, d.Count, d.Seed, d.RandomSeed = setup.Prompt, 1, seed, false
	if setup.Width > 0 {
		d.Size, d.CustomW, d.CustomH, d.Ratio = compose.SizeCustom, setup.Width, setup.Height, 0
	}
	d.LoRAs = append([]compose.LoRA(nil), d.LoRAs...)
	for i, l := range d.LoRAs {
		for _, w := range setup.LoRAs {
			if l.Enabled && loraName(l) == w.Name {
				d.LoRAs[i].Strength = w.Weight
			}
		}
	}
	return d
}

// Owns reports whether job id is one of the grid's.
func (p *Panel) Owns(id jobs.ID) bool { return p.run != nil && p.run.cellOf[id] != nil }

// Jobs are the latest grid's jobs (one per prefill group).
func (p *Panel) Jobs() []jobs.ID {
	if p.run == nil {
		return nil
	}
	var ids []jobs.ID
	for id := range p.run.cellOf {
		ids = append(ids, id)
	}
	return ids
}

// BatchID is the latest grid's identity, recorded in each of its cells' PNGs ("" before any).
func (p *Panel) BatchID() string {
	if p.run == nil {
		return ""
	}
	return p.run.batchID
}

// Event takes a grid job's event (the shell hands it every event first): a finished cell is
// saved with the grid's identity (History groups the grid like a batch) and drawn into the grid.
// It reports whether the job was a grid's.
func (p *Panel) Event(j jobs.Job, ev pipeline.Event) bool {
	run := p.run
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
	run.pictures[gi], run.sets[gi] = res.Image, set
	p.Sheet.show()
	p.shell.Save(j.ID, res.Image, set, func(e history.Entry, err error) {
		if err != nil {
			return // kept by the shell, which said so
		}
		run.paths[gi] = e.Path
		if len(run.paths) == run.g.Count() || (run.stopped && len(run.paths) == len(run.pictures)) {
			p.saveGrid(run)
		}
	})
	return true
}

// Stopped marks a grid whose job failed or was cancelled: its other jobs are cancelled, and the
// grid is saved with the cells finished (placeholders for the rest) once they are saved.
func (p *Panel) Stopped(j jobs.Job) {
	run := p.run
	if run == nil || run.cellOf[j.ID] == nil || run.stopped {
		return
	}
	run.stopped = true
	for id := range run.cellOf {
		if id != j.ID {
			p.shell.Cancel(id)
		}
	}
	if len(run.pictures) > 0 && len(run.paths) == len(run.pictures) {
		p.saveGrid(run)
	}
}

// saveGrid saves the finished grid image(s), with the axes in their settings, to the history
// (history.Store names them as grids).
func (p *Panel) saveGrid(run *exploration) {
	if run.gridSaved {
		return
	}
	run.gridSaved = true
	names := make([]string, run.g.Count())
	for i, path := range run.paths {
		names[i] = filepath.Base(path)
	}
	for z := range run.g.Dims()[2] {
		img, _, err := run.g.Compose(z, run.pictures)
		if err != nil {
			p.model.Say(model.NoticeWarning, "The grid image could not be drawn: %v", err)
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
		p.shell.Save(0, img, &set, func(_ history.Entry, err error) {
			if err != nil {
				p.model.Say(model.NoticeWarning, "The grid image could not be saved: %v", err)
			}
		})
	}
}
