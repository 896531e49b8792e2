package ui

import (
	"image"
	"time"

	"easel/app/history"
	"easel/app/imagefile"
)

// saveInBackground writes img with its settings into store off the UI goroutine, then hands the
// entry (or the error) to done on the UI goroutine. Closing the window waits for every write
// begun here, so quitting while a finished image is being written does not lose it.
func (s *window) saveInBackground(store *history.Store, img *image.NRGBA, set *imagefile.Settings, at time.Time, done func(history.Entry, error)) {
	s.saveThen(store, img, set, at, nil, done)
}

// saveThen is saveInBackground with written, when not nil, run on the writing goroutine once the
// write is over (before closing the window stops waiting for it).
func (s *window) saveThen(store *history.Store, img *image.NRGBA, set *imagefile.Settings, at time.Time, written func(error), done func(history.Entry, error)) {
	s.saving.Add(1)
	go func() {
		e, err := store.Save(img, set, at)
		if written != nil {
			written(err)
		}
		s.saving.Done() // before Do: close waits on the UI goroutine, which runs done later
		s.deps.Do(func() { done(e, err) })
	}()
}
