package keeping

import (
	"sync"

	"easel/app/checkpoint"
	"easel/app/compose"
	"easel/app/jobs"
	"easel/app/unfinished"
	"easel/engine/pipeline"

	"easel/ui/kit"
	"easel/ui/queue"
)

// keptJobs are the window's jobs kept in Shell.Unfinished while they are queued or running, so a
// crash, a quit or a restart does not lose them (app/unfinished): each checkpoints every step.
// Its fields are guarded by mu: a job's images are written, and its kept record may go, on a
// writing goroutine.
type keptJobs struct {
	mu           sync.Mutex
	byID         map[jobs.ID]*unfinished.Job
	fingerprints map[string]string  // model path → checkpoint.Fingerprint
	offer        *queue.Offer       // the offer last shown
	saves        map[jobs.ID]*saves // saves.go
}

// Keep keeps a job about to be queued (resumed: the kept job it continues) and sets req's OnStep
// to checkpoint it; nil when jobs are not kept. Once queued, KeptAs records it under the job's
// id; a job that could not be queued is let go with its Done.
func (r *Region) Keep(d compose.Draft, seed uint64, req *pipeline.Request, resumed *unfinished.Job) *unfinished.Job {
	store := r.shell.Unfinished()
	if store == nil {
		return nil
	}
	fp := r.fingerprint(d.Model)
	if fp == "" {
		return nil
	}
	k := resumed
	if k == nil {
		var err error
		if k, err = store.Add(d, seed, kit.JobLabel(d.Prompt, seed), r.shell.Where()); err != nil {
			r.say("This job will not resume after a crash or a quit: %v", err)
			return nil
		}
	}
	k.Writer().Notice = func(n string) { r.shell.Do(func() { r.say("%s", n) }) }
	req.OnStep = k.OnStep(req, fp)
	return k
}

// fingerprint is the model file's (cached per path), or "" when it cannot be read.
func (r *Region) fingerprint(model string) string {
	r.kept.mu.Lock()
	defer r.kept.mu.Unlock()
	if fp, ok := r.kept.fingerprints[model]; ok {
		return fp
	}
	fp, err := checkpoint.FingerprintFile(model)
	if err != nil {
		return ""
	}
	if r.kept.fingerprints == nil {
		r.kept.fingerprints = map[string]string{}
	}
	r.kept.fingerprints[model] = fp
	return fp
}

// KeptAs records the queued job id's kept job (k nil: none).
func (r *Region) KeptAs(id jobs.ID, k *unfinished.Job) {
	if k == nil {
		return
	}
	r.kept.mu.Lock()
	defer r.kept.mu.Unlock()
	if r.kept.byID == nil {
		r.kept.byID = map[jobs.ID]*unfinished.Job{}
	}
	r.kept.byID[id] = k
}

// Finished forgets job id's kept job once its images are written (saves.go): it finished, failed,
// or the artist cancelled it. (A job stopped by a crash or a quit stays kept.)
func (r *Region) Finished(id jobs.ID) {
	r.keptSave(id, func(k *saves) { k.over = true })
}

// Kept reports whether job id is kept for the next launch.
func (r *Region) Kept(id jobs.ID) bool {
	r.kept.mu.Lock()
	defer r.kept.mu.Unlock()
	_, ok := r.kept.byID[id]
	return ok
}

// discardKept removes what was kept of this window's unfinished jobs (their checkpoints), once
// the queue has stopped them: the artist chose Discard and quit.
func (r *Region) discardKept() {
	r.kept.mu.Lock()
	ids := make([]jobs.ID, 0, len(r.kept.byID))
	for id := range r.kept.byID {
		ids = append(ids, id)
	}
	r.kept.mu.Unlock()
	for _, id := range ids {
		r.Finished(id)
	}
}

// waitKept waits for the checkpoint writes in flight of the jobs kept for the next launch (Finish
// later, or the window closed with jobs): the queue has stopped them, and a write still going when
// the process ends would be lost, so the next launch would resume from an older step or the start.
func (r *Region) waitKept() {
	r.kept.mu.Lock()
	kept := make([]*unfinished.Job, 0, len(r.kept.byID))
	for _, k := range r.kept.byID {
		kept = append(kept, k)
	}
	r.kept.mu.Unlock()
	for _, k := range kept {
		k.Writer().Wait()
	}
}
