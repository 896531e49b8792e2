package keeping

import (
	"image"
	"time"

	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/jobs"
)

// saves is what the region knows of a kept job's images being written: a job's checkpoints go
// only once it is over and every image of it is on disk, so a crash or a full disk while the PNG
// is written does not lose the job.
type saves struct {
	inFlight int  // its images being written
	unsaved  int  // its images that could not be written and are kept in memory (images.go)
	over     bool // the job finished or was cancelled
}

// SaveJobImage is SaveInBackground for an image of job id (retry: one kept in memory after its
// write failed): its kept job stays until the PNG is written (a failed write keeps it until the
// image is saved in another folder).
func (r *Region) SaveJobImage(id jobs.ID, retry bool, store *history.Store, img *image.NRGBA, set *imagefile.Settings, at time.Time, done func(history.Entry, error)) {
	r.keptSave(id, func(k *saves) { k.inFlight++ })
	r.saveThen(store, img, set, at, func(err error) {
		r.keptSave(id, func(k *saves) {
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
func (r *Region) keptSave(id jobs.ID, change func(*saves)) {
	r.kept.mu.Lock()
	if r.kept.saves == nil {
		r.kept.saves = map[jobs.ID]*saves{}
	}
	k := r.kept.saves[id]
	if k == nil {
		k = &saves{}
		r.kept.saves[id] = k
	}
	change(k)
	gone := k.over && k.inFlight == 0 && k.unsaved <= 0
	kept := r.kept.byID[id]
	if gone {
		delete(r.kept.saves, id)
		delete(r.kept.byID, id)
	}
	r.kept.mu.Unlock()
	if gone && kept != nil {
		if err := kept.Done(); err != nil {
			r.shell.Do(func() { r.say("%v", err) })
		}
	}
}

// SaveInBackground writes img with its settings into store off the UI goroutine, then hands the
// entry (or the error) to done on the UI goroutine. Closing the window waits for every write
// begun here (Close), so quitting while a finished image is being written does not lose it.
func (r *Region) SaveInBackground(store *history.Store, img *image.NRGBA, set *imagefile.Settings, at time.Time, done func(history.Entry, error)) {
	r.saveThen(store, img, set, at, nil, done)
}

// saveThen is SaveInBackground with written, when not nil, run on the writing goroutine once the
// write is over (before Close stops waiting for it).
func (r *Region) saveThen(store *history.Store, img *image.NRGBA, set *imagefile.Settings, at time.Time, written func(error), done func(history.Entry, error)) {
	r.saving.Add(1)
	go func() {
		e, err := store.Save(img, set, at)
		if written != nil {
			written(err)
		}
		r.saving.Done() // before Do: Close waits on the UI goroutine, which runs done later
		r.shell.Do(func() { done(e, err) })
	}()
}
