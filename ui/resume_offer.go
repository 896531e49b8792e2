package ui

import (
	"easel/ui/queue"
	"sync"

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
	offer        *queue.Offer           // the offer last shown (tests tap it)
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

// offerResume shows what earlier sessions left unfinished (queue.Offer): one row per job, each
// resumed (queued from its checkpoint) or discarded on its own, or all at once; Later (or Esc)
// keeps them for the next launch.
func (s *window) offerResume() {
	store := s.deps.Unfinished
	if store == nil {
		return
	}
	left, err := store.List()
	if err != nil {
		s.say("%v", err)
	}
	o := queue.NewOffer(left, queue.OfferActions{
		Resume:  s.resumeAll,
		Where:   s.resumeWhere,
		Problem: func(err error) { s.say("%v", err) },
	}, s.win)
	if o == nil {
		return
	}
	s.keeping.offer = o
	s.show(o.Dialog)
}

// resumeWhere names where a kept job was rendering.
func (s *window) resumeWhere(p *unfinished.Pending) string {
	if p.Where == "" {
		return thisMachine()
	}
	return p.Where
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
