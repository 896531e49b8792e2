package keeping

import (
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/compose"
	"easel/app/history"
	"easel/app/jobs"
	"easel/app/unfinished"

	"easel/ui/model"
)

// Shell is what the region needs from the window around it. Every function runs on the UI
// goroutine; none may be nil except where said.
type Shell struct {
	// Do runs f on the UI goroutine.
	Do func(f func())
	// Window is the dialogs' parent; Show shows a dialog on the window's question stack.
	Window fyne.Window
	Show   func(d dialog.Dialog)
	// Unfinished is the store keeping the window's jobs across a crash or a quit (nil: jobs are
	// not kept).
	Unfinished func() *unfinished.Store
	// History is where finished images are saved; OutputFolder its folder, as the artist set it.
	History      func() *history.Store
	OutputFolder func() string
	// Now is the time a finished image is made at (its file name's).
	Now func() time.Time
	// Where names where new jobs render ("" this machine); Here is how the window names this
	// machine.
	Where func() string
	Here  string
	// Submit queues job, made from d with seed, continuing the kept job resumed; it reports
	// whether it was queued.
	Submit func(d compose.Draft, seed uint64, job compose.Job, resumed *unfinished.Job) bool
	// Listed adds a saved image to the history strip.
	Listed func(e history.Entry)
	// Showing is the job whose picture is on the canvas (0: none) and the saved file shown ("":
	// a preview or an unsaved image); Saved says job id's picture is now the file at path.
	Showing func() (job jobs.ID, file string)
	Saved   func(id jobs.ID, path string)
	// JobSaved follows a window job's image saved as e (fromStart: the run started from an image).
	JobSaved func(e history.Entry, fromStart bool)
}

// Region keeps the window's jobs and images (see the package comment). Its methods run on the UI
// goroutine unless they say otherwise.
type Region struct {
	shell Shell
	model *model.Window
	kept  keptJobs
	// saving counts the images being written off the UI goroutine (SaveInBackground).
	saving sync.WaitGroup
	// images are finished images that could not be saved, by job, until saved elsewhere.
	images map[jobs.ID]keptImage
	// saveOffer is the offer of another folder while shown.
	saveOffer *dialog.ConfirmDialog
	// SaveTo saves the unsaved image on the canvas in a chosen folder; it shows only while such
	// an image is on the canvas (Refresh).
	SaveTo *widget.Button
}

// New builds the region over the window's model.
func New(m *model.Window, sh Shell) *Region {
	r := &Region{shell: sh, model: m, images: map[jobs.ID]keptImage{}}
	r.SaveTo = widget.NewButtonWithIcon("Save to…", theme.DocumentSaveIcon(), r.saveShown)
	r.SaveTo.Hide()
	return r
}

// say shows a warning in the window's notice (UI goroutine).
func (r *Region) say(format string, args ...any) {
	r.model.Say(model.NoticeWarning, format, args...)
}

// Close is the window closing, once the queue has stopped its jobs: with discard (Discard and
// quit) the kept jobs go; else they stay for the next launch, and Close waits for their
// checkpoint writes in flight. Either way it waits for the images being written.
func (r *Region) Close(discard bool) {
	if discard {
		r.discardKept()
	}
	r.waitKept()
	r.saving.Wait()
}
