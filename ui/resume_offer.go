package ui

import (
	"fmt"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/checkpoint"
	"easel/app/compose"
	"easel/app/jobs"
	"easel/app/unfinished"
	"easel/engine/pipeline"
)

// keptJobs are the window's jobs kept in Deps.Unfinished while they are queued or running, so a
// crash, a quit or a restart does not lose them (app/unfinished): each checkpoints every step.
type keptJobs struct {
	mu           sync.Mutex
	byID         map[jobs.ID]*unfinished.Job
	fingerprints map[string]string      // model path → checkpoint.Fingerprint
	offer        dialog.Dialog          // the offer on screen (tests tap it)
	offerRows    *fyne.Container        // a row per kept job, each with Resume and Discard
	offerResume  *widget.Button         // Resume all
	offerDiscard *widget.Button         // Discard all
	saves        map[jobs.ID]*keptSaves // kept_saves.go
}

// keepJob keeps a job about to be queued (resumed: the kept job it continues) and sets req's
// OnStep to checkpoint it; nil when jobs are not kept.
func (s *window) keepJob(d compose.Draft, seed uint64, req *pipeline.Request, resumed *unfinished.Job) *unfinished.Job {
	store := s.deps.Unfinished
	if store == nil {
		return nil
	}
	fp := s.fingerprint(d.Model)
	if fp == "" {
		return nil
	}
	k := resumed
	if k == nil {
		var err error
		if k, err = store.Add(d, seed, jobLabel(d.Prompt, seed), s.router.Where()); err != nil {
			s.say("This job will not resume after a crash or a quit: %v", err)
			return nil
		}
	}
	k.Writer().Notice = func(n string) { s.deps.Do(func() { s.say("%s", n) }) }
	req.OnStep = k.OnStep(req, fp)
	return k
}

// fingerprint is the model file's (cached per path), or "" when it cannot be read.
func (s *window) fingerprint(model string) string {
	s.keeping.mu.Lock()
	defer s.keeping.mu.Unlock()
	if fp, ok := s.keeping.fingerprints[model]; ok {
		return fp
	}
	fp, err := checkpoint.FingerprintFile(model)
	if err != nil {
		return ""
	}
	if s.keeping.fingerprints == nil {
		s.keeping.fingerprints = map[string]string{}
	}
	s.keeping.fingerprints[model] = fp
	return fp
}

// keptAs records the queued job id's kept job.
func (s *window) keptAs(id jobs.ID, k *unfinished.Job) {
	if k == nil {
		return
	}
	s.keeping.mu.Lock()
	defer s.keeping.mu.Unlock()
	if s.keeping.byID == nil {
		s.keeping.byID = map[jobs.ID]*unfinished.Job{}
	}
	s.keeping.byID[id] = k
}

// finishedKept forgets job id's kept job once its images are written (kept_saves.go): it
// finished, or the artist cancelled it. (A job stopped by a crash or a quit stays kept.)
func (s *window) finishedKept(id jobs.ID) {
	s.keptSave(id, func(k *keptSaves) { k.over = true })
}

// offerResume shows what earlier sessions left unfinished, one row per job — its prompt, seed,
// size, where it was rendering and where it stopped — each resumed (queued from its checkpoint)
// or discarded on its own, or all at once; Later (or Esc) keeps them for the next launch.
func (s *window) offerResume() {
	store := s.deps.Unfinished
	if store == nil {
		return
	}
	left, err := store.List()
	if err != nil {
		s.say("%v", err)
	}
	if len(left) == 0 {
		return
	}
	var d dialog.Dialog
	rows := container.NewVBox()
	pending := map[*unfinished.Pending]fyne.CanvasObject{}
	title := func() string {
		if len(pending) == 1 {
			return "Resume 1 unfinished job"
		}
		return fmt.Sprintf("Resume %d unfinished jobs", len(pending))
	}
	var all *widget.Button
	settle := func(p *unfinished.Pending) {
		rows.Remove(pending[p])
		delete(pending, p)
		if len(pending) == 0 {
			d.Hide()
			return
		}
		all.SetText(title())
	}
	for _, p := range left {
		p := p
		resume := widget.NewButton("Resume", func() {
			settle(p)
			s.resumeAll([]*unfinished.Pending{p})
		})
		discard := widget.NewButton("Discard", func() {
			if err := p.Discard(); err != nil {
				s.say("%v", err)
				return
			}
			settle(p)
		})
		row := resumeRow(p, s.resumeWhere(p), resume, discard)
		pending[p] = row
		rows.Add(row)
	}
	all = widget.NewButton(title(), func() {
		d.Hide()
		var order []*unfinished.Pending
		for _, p := range left {
			if _, ok := pending[p]; ok {
				order = append(order, p)
			}
		}
		s.resumeAll(order)
	})
	all.Importance = widget.HighImportance
	discardAll := widget.NewButton("Discard all", func() {
		d.Hide()
		for _, p := range left {
			if _, ok := pending[p]; ok {
				if err := p.Discard(); err != nil {
					s.say("%v", err)
				}
			}
		}
	})
	later := widget.NewButton("Later", func() { d.Hide() })
	scroll := container.NewVScroll(rows)
	scroll.SetMinSize(fyne.NewSize(560, min(float32(len(left)), 4)*resumeRowHeight()))
	d = dialog.NewCustomWithoutButtons("Unfinished jobs", scroll, s.win)
	d.(*dialog.CustomDialog).SetButtons([]fyne.CanvasObject{later, discardAll, all})
	s.keeping.offer, s.keeping.offerRows, s.keeping.offerResume, s.keeping.offerDiscard = d, rows, all, discardAll
	s.show(d)
}

// resumeWhere names where a kept job was rendering.
func (s *window) resumeWhere(p *unfinished.Pending) string {
	if p.Where == "" {
		return thisMachine()
	}
	return p.Where
}

// resumeRowText is a kept job's row: its prompt (truncated by the row), and its seed, size,
// where it was rendering and where it stopped.
func resumeRowText(p *unfinished.Pending, where string) (prompt, facts string) {
	prompt = strings.Join(strings.Fields(p.Draft.Prompt), " ")
	if prompt == "" {
		prompt = "(no prompt)"
	}
	size := "size unknown"
	if w, h, err := p.Draft.OutputSize(); err == nil {
		size = fmt.Sprintf("%d×%d", w, h)
	}
	facts = fmt.Sprintf("seed %d · %s · %s · %s", p.Seed, size, where, p.Describe())
	if p.Problem != nil {
		facts += " · its checkpoint cannot be used, it starts again"
	}
	return prompt, facts
}

// resumeRow is one kept job with its own Resume and Discard.
func resumeRow(p *unfinished.Pending, where string, resume, discard *widget.Button) fyne.CanvasObject {
	prompt, facts := resumeRowText(p, where)
	top := widget.NewLabelWithStyle(prompt, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	top.Truncation = fyne.TextTruncateEllipsis
	bottom := widget.NewLabel(facts)
	bottom.Truncation = fyne.TextTruncateEllipsis
	bottom.Importance = widget.LowImportance
	return container.NewBorder(nil, nil, nil, container.NewHBox(resume, discard), container.NewVBox(top, bottom))
}

// resumeRowHeight is a row's height: two lines of text.
func resumeRowHeight() float32 {
	return 2*widget.NewLabel("Ag").MinSize().Height + theme.Padding()
}

// resumeAll queues the pending jobs in their order.
func (s *window) resumeAll(left []*unfinished.Pending) {
	for _, p := range left {
		if p.Problem != nil {
			p.Checkpoint = nil // start it again; the damaged file stays for inspection
		}
		job, k, err := p.Job(s.fingerprint(p.Draft.Model))
		if err != nil {
			s.say("%s cannot be resumed: %v", p.Label, err)
			continue
		}
		s.submitJob(p.Draft, p.Seed, job, k)
	}
}
