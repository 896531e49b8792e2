package ui

import (
	"time"

	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/memplan"

	"easel/ui/canvasarea"

	"easel/ui/progress"

	"easel/ui/remote"
	"easel/ui/savedimage"
	"easel/ui/setup"

	"easel/ui/batch"
	"easel/ui/explore"
	"easel/ui/gallery"
	"easel/ui/imagework"
	"easel/ui/keeping"
	"easel/ui/prompthelp"
	"easel/ui/queue"
	"easel/ui/recipe"
)

// The window's state, grouped by concern: each group is one of the shell's parts (the regions'
// panels, the controls, remote work, what is shown, the dialogs, undo, closing, the next run).

// regions are the panels the shell builds and lays out (mainwindow.go).
type regions struct {
	prompt     *recipe.Prompt
	help       *prompthelp.Panel // Expand, Describe, Check (ui/prompthelp)
	conditions *recipe.Conditions
	loras      *recipe.LoRAs
	fast       *recipe.FastDrafts // the LoRA section's Draft / Final switch and download
	options    *recipe.Options
	work       *imagework.Region
	explore    *explore.Panel // the Explore section and its grid (ui/explore)
	canvas     *canvasarea.View
	area       *canvasarea.Area // the centre: the canvas, the batch's sheet or Explore's grid
	progress   *progress.View
	strip      *progress.Strip // memory and time under the canvas
	memory     *progress.MemoryPanel
	timing     *progress.TimingPanel
	queueList  *queue.List // the queue under the canvas (ui/queue)
	history    *gallery.History
	actions    *savedimage.Actions
	batch      *batch.Region  // the latest batch's contact sheet and its actions (ui/batch)
	sheet      *gallery.Sheet // the batch region's sheet
	sections   *widget.Accordion
	column     *container.Scroll // the recipe column's scroll (the wheel scrolls it: wheel.go)
}

// controls are Generate and Cancel and the lines around them.
type controls struct {
	message     *widget.Label // the notice (notices.go), in noticeBox
	noticeBox   *container.Scroll
	blocked     *widget.Label // why Generate is off, while it is
	generateBtn *widget.Button
	cancelBtn   *widget.Button
	network     *widget.Label // where jobs render and whether this machine is shared
}

// remoteWork is rendering on another machine or a studio, sharing this one, and lending it
// (ui/remote, built and wired in remote_work.go).
type remoteWork struct {
	// router sends jobs to this Mac's generator, another machine's server or a studio.
	router *remote.Router
	remote *remote.Work
}

// shown is what the canvas shows and what was last made.
type shown struct {
	// canvasJob is the job whose picture is on the canvas (0 for a file; the saved file shown
	// is actions.Shown()).
	canvasJob jobs.ID
	// sharpJob is the job whose sharp preview is on the canvas: its fast previews no longer
	// replace it (only a newer sharp one or the final image do).
	sharpJob jobs.ID
	lastSeed uint64
	haveSeed bool
	// lastStepTime is the latest run's mean step time (the upscale offer's time estimate).
	lastStepTime time.Duration
	// lastFolder is where the last file was chosen from (file dialogs open there).
	lastFolder string
	// lentShown: the canvas shows a studio image rendered here (remote_work.go), not the
	// artist's.
	lentShown bool
}

// questions are the dialogs on screen: the stack Esc closes from the top (questions.go) and the
// ones the window answers itself.
type questions struct {
	questionStack
	offer     *dialog.ConfirmDialog // the Upscale or Refine offer while shown
	offerText string
	lostModel *setup.ModelLost // the offer to choose the model again
}

// undoing is what ⌘Z takes back besides mask strokes (draft_undo.go): edits counts the window's
// undoable edits, maskEdits is the count at the latest mask stroke.
type undoing struct {
	undos     []undoStep
	edits     int
	maskEdits int
}

// closing is quitting with jobs and the draft kept for the next launch (closing.go).
type closing struct {
	// closeAsked is set once the artist chose to quit with jobs (finish later or discard);
	// discardOnClose when that was Discard: the kept jobs go with the window.
	closeAsked     bool
	discardOnClose bool
	closeDialog    dialog.Dialog
	drafts         *keeping.Draft // the draft kept for the next launch
	resumeErr      error          // why the last draft could not be read
}

// nextRun is what the next submit is and what the draft predicts.
type nextRun struct {
	// nextKind and nextHires are what the next submit is ("Vary", "Upscale ×2", "Refine") and
	// its Hires record for the PNG, taken by submit (each job's record: model.JobRecord).
	nextKind     string
	nextHires    *imagefile.HiresSettings
	prediction   memplan.Prediction
	predictedErr error
}
