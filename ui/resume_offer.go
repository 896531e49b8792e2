package ui

import (
	"fmt"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
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
	fingerprints map[string]string // model path → checkpoint.Fingerprint
	offer        dialog.Dialog     // the offer on screen (tests tap it)
	offerText    *widget.Label
	offerResume  *widget.Button
	offerDiscard *widget.Button
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
		if k, err = store.Add(d, seed, jobLabel(d.Prompt, seed), s.router.where()); err != nil {
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

// offerResume shows what earlier sessions left unfinished — "Resume 3 unfinished jobs", each
// with where it stopped — and resumes them (queued in their order, each from its checkpoint) or
// discards them and every checkpoint.
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
	lines := make([]string, 0, len(left))
	for _, p := range left {
		line := fmt.Sprintf("%s — %s", p.Label, p.Describe())
		if p.Problem != nil {
			line += fmt.Sprintf(" (its checkpoint cannot be used: %v; it starts again)", p.Problem)
		}
		lines = append(lines, line)
	}
	title := fmt.Sprintf("Resume %d unfinished job", len(left))
	if len(left) > 1 {
		title += "s"
	}
	text := widget.NewLabel(strings.Join(lines, "\n"))
	text.Wrapping = fyne.TextWrapWord
	var d dialog.Dialog
	resume := widget.NewButton(title, func() {
		d.Hide()
		s.resumeAll(left)
	})
	resume.Importance = widget.HighImportance
	discard := widget.NewButton("Discard", func() {
		d.Hide()
		if err := store.Discard(); err != nil {
			s.say("%v", err)
		}
	})
	d = dialog.NewCustomWithoutButtons("Unfinished jobs", container.NewVBox(text, container.NewHBox(resume, discard)), s.win)
	s.keeping.offer, s.keeping.offerText, s.keeping.offerResume, s.keeping.offerDiscard = d, text, resume, discard
	d.Show()
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
