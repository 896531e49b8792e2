package batch

import (
	"fmt"
	"image"
	"strings"
	"time"

	"fyne.io/fyne/v2"

	"easel/app/compose"
	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/memplan"
	"easel/engine/pipeline"

	"easel/ui/canvasarea"
	"easel/ui/gallery"
	"easel/ui/kit"
	"easel/ui/model"
)

// MaxCount is the largest batch the window makes (the CLI goes to pipeline.MaxCount).
const MaxCount = 16

// VaryKind is how the queue names a Vary job (and how its batch is known to open beside).
const VaryKind = "Vary"

// Shell is what the region asks of the window's shell. Every function is called on the UI
// goroutine; Save's done is too.
type Shell struct {
	// Store is the history's store now (Keep saves a discarded image again into it).
	Store func() *history.Store
	// Save writes job id's image into the history off the UI goroutine and lists it; done hears
	// the entry or the error (an image that could not be saved is kept by the shell, which
	// offers another folder, before done hears the error).
	Save func(id jobs.ID, img *image.NRGBA, set *imagefile.Settings, done func(history.Entry, error))
	// Listed lists an image saved again in the history.
	Listed func(history.Entry)
	// Open shows a finished image (its saved file at path, "" for none yet) on the canvas.
	Open func(img image.Image, path string)
	// Removed says a discarded image's file at path is gone.
	Removed func(path string)
	// ShowSheet brings the sheet into the centre.
	ShowSheet func()
	// Menu is a cell's right-click menu (Describe, Check, the learned upscales); nil for none.
	Menu func(c *gallery.Cell) *fyne.Menu
	// Submit queues a run of d from d.Seed; kind names it in the queue ("Vary", "Refine",
	// "Upscale ×2"), hires is an upscale's record for its PNG. It reports whether it was queued.
	Submit func(d compose.Draft, kind string, hires *imagefile.HiresSettings) bool
	// Ask offers what: text says it, confirm is its button; yes runs on confirm.
	Ask func(what, text, confirm string, yes func())
	// FirstStageOffer is what the offer adds about an upscale's first stage (the learned
	// upscaler or Lanczos); FirstStage makes it (w×h from img) and hands it to then with the
	// upscaler's name.
	FirstStageOffer func(w, h int, factor float64) string
	FirstStage      func(img *image.NRGBA, w, h int, factor float64, then func(first *image.NRGBA, upscaler string))
	// Memory is the model's geometry and the device's budget now, for an upscale's memory plan.
	Memory func() (memplan.Geometry, int64)
	// StepTime is the latest run's mean step time (0 before any); RandomSeed a new random
	// seed; Now the time.
	StepTime   func() time.Duration
	RandomSeed func() uint64
	Now        func() time.Time
}

// Region is the contact sheet and its batch: Sheet is the widget (its Box goes in the centre).
type Region struct {
	Sheet *gallery.Sheet

	model *model.Window
	shell Shell
	// job is the sheet's live batch, draft what it was made from, id its identity (recorded
	// in each of its PNGs: imagefile.BatchSettings).
	job   jobs.ID
	draft compose.Draft
	id    string
	// apiBatches are the identities of API jobs' batches, while they run.
	apiBatches map[jobs.ID]string
}

// New builds the region over the window's model.
func New(m *model.Window, sh Shell) *Region {
	r := &Region{model: m, shell: sh, apiBatches: map[jobs.ID]string{}}
	r.Sheet = gallery.NewSheet(gallery.Actions{
		Open:    r.open,
		Discard: r.discard,
		Keep:    r.keep,
		Vary:    func(c *gallery.Cell, strength float64) { r.Vary(c, r.cellDraft(c), strength) },
		Refine:  func(c *gallery.Cell) { r.SecondPass(c, r.cellDraft(c), 1) },
		Upscale: func(c *gallery.Cell, factor float64) { r.SecondPass(c, r.cellDraft(c), factor) },
		Menu:    sh.Menu,
	})
	return r
}

// Job is the sheet's live batch job (0 before any).
func (r *Region) Job() jobs.ID { return r.job }

// Draft is what the sheet's live batch was made from.
func (r *Region) Draft() compose.Draft { return r.draft }

// ownJob reports whether the window's artist queued j (an API job has an origin).
func ownJob(j jobs.Job) bool { return j.Origin == "" }

// Event shows a batch's event (framed: its preview over the checkerboard, or nil): a new batch
// fills a new sheet, a step's preview goes to its image's cell, a finished image is shown and
// saved. An API job's images are saved to the history only.
func (r *Region) Event(j jobs.Job, ev pipeline.Event, framed image.Image) {
	count := max(j.Request.Batch(), len(j.Request.Cells))
	if !ownJob(j) {
		if ev.Finished != nil {
			if r.apiBatches[j.ID] == "" {
				r.apiBatches[j.ID] = imagefile.NewBatchID(r.shell.Now(), uint64(j.ID), j.Request.Seed)
			}
			r.saveImage(j, ev.Finished, count)
		}
		return
	}
	if r.job != j.ID {
		r.begin(j, ev.Images)
	}
	if ev.Finished != nil {
		res := ev.Finished
		r.Sheet.Finished(res.Index, res.Image, canvasarea.FrameFinal(res.Image))
		r.saveImage(j, res, count)
		return
	}
	if ev.Preview != nil && framed != nil {
		r.Sheet.Preview(ev.Image, framed)
	}
}

// begin fills the sheet with job j's n images, waiting: variations open beside the batch they
// came from, which stays a tab away.
func (r *Region) begin(j jobs.Job, n int) {
	rec, _ := r.model.Job(j.ID)
	r.job, r.draft = j.ID, rec.Draft
	r.id = imagefile.NewBatchID(r.shell.Now(), uint64(j.ID), j.Request.Seed)
	seeds := make([]uint64, n)
	var vars []uint64
	for i := range seeds {
		seeds[i], _ = j.Request.ImageSeeds(i)
		if j.Request.VariationStrength > 0 {
			_, v := j.Request.ImageSeeds(i)
			vars = append(vars, v)
		}
	}
	label := kit.JobLabel(j.Request.Prompt, j.Request.Seed)
	if strings.HasPrefix(j.Label, VaryKind+" · ") && r.Sheet.HasBatch() {
		r.Sheet.BeginBeside(fmt.Sprintf("%s %d", VaryKind, r.Sheet.Groups()), label, seeds, vars)
	} else {
		r.Sheet.Begin(label, seeds, vars)
	}
	r.shell.ShowSheet() // the sheet fills the centre as the images finish
	r.Sheet.SetLiveDraft(r.draft)
}

// Stopped marks a failed or cancelled batch's unfinished images.
func (r *Region) Stopped(j jobs.Job) {
	if r.job == j.ID {
		r.Sheet.Stopped()
	}
}

// Ended forgets what the region kept of job j (an API batch's identity) once it ended.
func (r *Region) Ended(j jobs.Job) { delete(r.apiBatches, j.ID) }
