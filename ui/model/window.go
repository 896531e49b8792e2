package model

import "easel/app/compose"

// Change says what part of the model an action changed; observers register for a set of them.
type Change uint8

// The parts of the model.
const (
	CanvasChanged Change = 1 << iota // the start image, mask, extension or their settings
	NoticeChanged                    // the notice the window shows
	JobsChanged                      // a job was submitted, started or ended
	DraftChanged                     // the recipe: prompt, size, steps, CFG, seed, conditions, LoRAs…
)

// Window is the window's model. The zero value is not ready: use New.
type Window struct {
	draft     compose.Draft
	canvas    Canvas
	notice    Notice
	jobs      map[JobID]JobRecord
	current   JobID
	observers []observer
	nextObs   int
}

type observer struct {
	id   int
	on   Change
	call func(Change)
}

// New is an empty model: the draft d (compose.NewDraft of the settings), text to image (no start
// image), the start image's default strength and feather, no notice, no jobs.
func New(d compose.Draft) *Window {
	return &Window{draft: d, canvas: emptyCanvas(), jobs: map[JobID]JobRecord{}}
}

// Observe calls f after every action that changes one of the parts in on; stop unregisters it.
func (w *Window) Observe(on Change, f func(Change)) (stop func()) {
	w.nextObs++
	id := w.nextObs
	w.observers = append(w.observers, observer{id: id, on: on, call: f})
	return func() {
		for i, o := range w.observers {
			if o.id == id {
				w.observers = append(w.observers[:i:i], w.observers[i+1:]...)
				return
			}
		}
	}
}

// changed tells the observers of c.
func (w *Window) changed(c Change) {
	for _, o := range append([]observer(nil), w.observers...) {
		if o.on&c != 0 {
			o.call(c)
		}
	}
}
