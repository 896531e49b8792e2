package ui

import (
	"image"
	"time"

	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/jobs"
)

// keptSaves is what keptJobs knows of a kept job's images being written: a job's checkpoints go
// only once it is over and every image of it is on disk, so a crash or a full disk while the PNG
// is written does not lose the job.
type keptSaves struct {
	inFlight int  // its images being written
	unsaved  int  // its images that could not be written and are kept in memory (kept_image.go)
	over     bool // the job finished or was cancelled
}

// saveJobImage is saveInBackground for an image of job id (retry: one kept in memory after its
// write failed): its kept job stays until the PNG is written (a failed write keeps it until the
// image is saved in another folder).
func (s *window) saveJobImage(id jobs.ID, retry bool, store *history.Store, img *image.NRGBA, set *imagefile.Settings, at time.Time, done func(history.Entry, error)) {
	s.keptSave(id, func(k *keptSaves) { k.inFlight++ })
	s.saveThen(store, img, set, at, func(err error) {
		s.keptSave(id, func(k *keptSaves) {
			k.inFlight--
			switch {
			case err != nil && !retry:
				k.unsaved++
			case err == nil && retry:
				k.unsaved--
			}
		})
	}, done)
}

// keptSave changes job id's save state, then forgets its kept job (removing its checkpoints)
// when the job is over, nothing of it is being written and no image of it failed to be. It runs
// on the UI goroutine or on a writing one.
func (s *window) keptSave(id jobs.ID, change func(*keptSaves)) {
	s.keeping.mu.Lock()
	if s.keeping.saves == nil {
		s.keeping.saves = map[jobs.ID]*keptSaves{}
	}
	k := s.keeping.saves[id]
	if k == nil {
		k = &keptSaves{}
		s.keeping.saves[id] = k
	}
	change(k)
	gone := k.over && k.inFlight == 0 && k.unsaved <= 0
	kept := s.keeping.byID[id]
	if gone {
		delete(s.keeping.saves, id)
		delete(s.keeping.byID, id)
	}
	s.keeping.mu.Unlock()
	if gone && kept != nil {
		if err := kept.Done(); err != nil {
			s.deps.Do(func() { s.say("%v", err) })
		}
	}
}
