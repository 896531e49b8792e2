package ui

import (
	"crypto/rand"
	"easel/app/activity"
	"easel/app/unfinished"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"easel/app/compose"
	"easel/app/desktop"
	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/memplan"
	"easel/app/serve/client"
	"easel/app/settings"
	"easel/engine/cmf"
	"easel/engine/mmapfile"
	"easel/engine/pipeline"

	"easel/ui/model"
)

// window is the main window's state: the draft, the queue, and the widgets that show them. All
// its methods run on the UI goroutine; the queue's updates reach it through deps.Do.
type window struct {
	deps Deps
	// model is the canvas document, the notice and the jobs' records, which the regions observe
	// and change through its actions (ui/model).
	model *model.Window
	win   fyne.Window
	// keeping are the jobs kept across a crash or a quit (resume_offer.go).
	keeping keptJobs
	// finisher runs the queue's jobs on deps.Generator, pasting runs from a start image back.
	finisher *finishing
	// router sends jobs to this Mac's generator or another machine's server (Render on); share is
	// the window's own server while "Share this Mac" is on.
	router *renderRouter
	share  *sharing
	// studioShare is Settings → Studio's hub (studio_share.go), made when first opened.
	studioShare *studioShare
	draft       compose.Draft
	queue       *jobs.Queue
	// saving counts the images being written off the UI goroutine (saveInBackground).
	saving sync.WaitGroup
	// studioRender is Studio… → Render on a studio (studio_render_on.go), made when first used.
	studioRender *studioRenderOn
	// studioLend is Studio… → Lend this Mac to a studio (studio_lend.go), made when first used.
	studioLend *studioLend

	// nextKind and nextHires are what the next submit is ("Vary", "Upscale ×2", "Refine") and
	// its Hires record for the PNG, taken by submit (each job's record: model.JobRecord).
	nextKind  string
	nextHires *imagefile.HiresSettings
	// offer is the Upscale or Refine offer while it is shown.
	offer     *dialog.ConfirmDialog
	offerText string
	// restoreAsk is the question what a dropped or pasted PNG with settings is for, while shown.
	restoreAsk *dialog.CustomDialog
	// lastFolder is where the last file was chosen from (file dialogs open there).
	lastFolder string
	// renderHere offers to run a job here after the machine it rendered on went away.
	renderHere *dialog.ConfirmDialog
	// editedPath is the latest saved result of a run from a start image.
	editedPath string
	lastSeed   uint64
	haveSeed   bool
	pasted     int // pasted images so far, for their names
	// shownPath is the saved file on the canvas ("" while a preview or an unsaved image is
	// shown); canvasJob is the job whose picture is on the canvas (0 for a file).
	shownPath string
	canvasJob jobs.ID
	// sharpJob is the job whose sharp preview is on the canvas: its fast previews no longer
	// replace it (only a newer sharp one or the final image do).
	sharpJob jobs.ID
	// sheet is the contact sheet of the latest batch; sheetJob its job and sheetDraft what it was
	// made from (batch.go).
	sheet      *contactSheet
	sheetJob   jobs.ID
	sheetBatch string // the batch's identity, recorded in each of its PNGs (imagefile.BatchSettings)
	sheetDraft compose.Draft
	apiBatches map[jobs.ID]string // an API job's batch identity, while it runs (batch.go)
	// lastStepTime is the latest run's mean step time (the upscale offer's time estimate).
	lastStepTime time.Duration
	// explore is the Explore section and exploring the grid it is making (explore.go).
	explore   *explorePanel
	exploring *exploration

	prompt     *promptPanel
	help       *promptHelp // Expand, Describe, Check (prompt_help.go)
	conditions *conditionsPanel
	loras      *lorasPanel
	options    *optionsPanel
	canvas     *canvasView
	progress   *progressView
	memory     *memoryPanel
	timing     *timingPanel
	queueList  *queuePanel
	history    *historyPanel
	actions    *imageActions
	work       *imageWorkPanel
	strip      *liveStrip  // memory and time under the canvas
	area       *canvasArea // the centre: the canvas, the batch's sheet or Explore's grid
	// undos are what ⌘Z takes back besides mask strokes (draft_undo.go); edits counts the
	// window's undoable edits, maskEdits is the count at the latest mask stroke.
	undos     []undoStep
	edits     int
	maskEdits int
	// closeAsked is set once the artist chose to quit with jobs (finish later or discard); closeDialog is that
	// question while shown; resumeErr is why the last draft could not be read (closing.go).
	closeAsked bool
	// discardOnClose: the artist chose Discard and quit, so the kept jobs go with the window.
	discardOnClose bool
	closeDialog    dialog.Dialog
	questions      questionStack // the dialogs shown, for Esc (questions.go)
	canvasSaved    savedCanvas   // the canvas files written for the next launch (closing.go)
	resumeErr      error
	// network says, while either is on, where jobs render and that this machine is shared.
	network  *widget.Label
	sections *widget.Accordion // the recipe's folding sections besides Work on an image

	message      *widget.Label // the latest notice (errors and hints), under the controls (notices.go)
	noticeBox    *container.Scroll
	blocked      *widget.Label // why Generate is off, while it is
	generateBtn  *widget.Button
	cancelBtn    *widget.Button
	prediction   memplan.Prediction
	predictedErr error
	// lostModel is the offer to choose the model again, while it is shown.
	lostModel *dialog.CustomDialog
	// kept are finished images that could not be saved, by job, until saved elsewhere;
	// saveOffer is the offer to choose another folder, while it is shown.
	kept      map[jobs.ID]keptImage
	saveOffer *dialog.ConfirmDialog
}

func newWindow(deps Deps) *window {
	s := &window{deps: deps, model: model.New(), draft: compose.NewDraft(deps.Settings), kept: map[jobs.ID]keptImage{}}
	if s.deps.Do == nil {
		s.deps.Do = fyne.Do
	}
	if s.deps.History == nil {
		s.deps.History = history.New(deps.Settings.OutputFolder)
	}
	if s.deps.Desktop == nil {
		s.deps.Desktop = desktop.System()
	}
	keep := &keptAreas{}
	s.router = &renderRouter{local: deps.Generator}
	s.finisher = &finishing{Generator: s.router}
	s.queue = jobs.New(s.finisher, func(u jobs.Update) {
		framed := frameUpdate(u, keep.of(u)) // compositing a 2K image takes a while: not on the UI goroutine
		s.deps.Do(func() { s.onUpdate(u, framed) })
	})
	if !deps.Settings.AllowIdleSleep {
		s.queue.KeepAwake(func() func() { return activity.Hold(activity.Reason) })
	}
	return s
}

// doc is the canvas document as it is now (ui/model).
func (s *window) doc() model.Canvas { return s.model.Canvas() }

// say shows a notice under the controls (a warning: what needs the artist's eye; sayKind for
// the others).
func (s *window) say(format string, args ...any) { s.sayKind(noticeWarning, format, args...) }

// quiet hides the notice once the artist's next action succeeded.
func (s *window) quiet() { s.model.Quiet() }

// memoryPlan is the draft's memory plan as a run of it would go: on Metal unless the backend is
// the CPU, with the sharp preview's decodes when the preview setting asks for them (as Generate
// sets the request's SharpPreview).
func (s *window) memoryPlan() (memplan.Plan, error) {
	plan, err := s.draft.Plan()
	if err == nil && s.doc().Start != nil {
		plan.Width, plan.Height, err = s.outputWithExtend(s.doc().Extend)
		if err == nil {
			err = startSizeProblem(plan.Width, plan.Height)
		}
	}
	plan.Metal = hasMetal && s.draft.Backend != "cpu"
	plan.SharpPreview = s.deps.Settings.Preview == settings.PreviewSharp
	return plan, err
}

// draftChanged re-predicts memory and updates whatever depends on the draft.
func (s *window) draftChanged() {
	s.options.refreshSize()
	plan, err := s.memoryPlan()
	s.predictedErr = err
	if err == nil {
		s.prediction = memplan.Predict(s.deps.Geometry, plan, s.deps.Budget)
		if s.model.Current() == 0 {
			s.memory.showPrediction(s.prediction, plan, s.deps.Geometry)
		}
	} else if s.model.Current() == 0 {
		s.memory.showError(err)
	}
	s.updateButtons()
	if s.explore != nil {
		s.explore.refresh() // the cell count and predictions follow the draft
	}
}

// canGenerate says whether Generate is allowed now, and why not.
func (s *window) canGenerate() (bool, string) {
	if s.predictedErr != nil {
		return false, s.predictedErr.Error()
	}
	if len(s.draft.Conditions) > 0 && !s.deps.Geometry.HasVision() {
		return false, "this model file has no vision tower (it was converted with --no-vision), so it cannot read condition images: remove them, or convert the model again without --no-vision"
	}
	if !s.prediction.Fits() {
		return false, "this size does not fit in memory (see Details under the canvas)"
	}
	return true, ""
}

func (s *window) updateButtons() {
	if ok, why := s.canGenerate(); ok {
		s.generateBtn.Enable()
		s.blocked.Hide()
	} else {
		s.generateBtn.Disable()
		s.blocked.SetText("Generate is off: " + why + ".")
		s.blocked.Show()
	}
	if s.queue.Pending() > 0 {
		s.cancelBtn.Enable()
	} else {
		s.cancelBtn.Disable()
	}
	if n := s.queue.Pending(); n > 0 {
		s.generateBtn.SetText(fmt.Sprintf("Generate (queue: %d)", n))
	} else {
		s.generateBtn.SetText("Generate")
	}
}

// generate submits the draft; while a job runs it queues behind it. While a dialog is open
// (Settings, an offer, a question) ⌘↩ does nothing: the dialog has the artist's attention.
func (s *window) generate() {
	if s.win != nil && s.win.Canvas().Overlays().Top() != nil {
		return
	}
	if ok, why := s.canGenerate(); !ok {
		s.say("Cannot generate: %s.", why)
		return
	}
	seed := s.draft.Seed
	if s.draft.RandomSeed {
		seed = randomSeed()
	}
	d := s.jobDraft()
	if s.submit(d, seed) {
		s.saveDraft() // what was asked for survives a crash too
	}
}

// submit queues a run of d with seed; it reports whether it was queued.
func (s *window) submit(d compose.Draft, seed uint64) bool {
	job, err := d.Job(seed)
	if err != nil {
		s.say("Cannot generate: %v", err)
		return false
	}
	return s.submitJob(d, seed, job, nil)
}

// submitJob queues job, made from d with seed (resumed: the kept job it continues, see
// resume_offer.go); it reports whether it was queued.
func (s *window) submitJob(d compose.Draft, seed uint64, job compose.Job, resumed *unfinished.Job) bool {
	req := job.Request
	if job.Prepared != nil {
		s.finisher.expect(req.Init, &job)
	}
	if s.deps.Calibrator != nil {
		req.Preview = s.deps.Calibrator.Render
	} else if s.deps.Projection != nil {
		req.Preview = s.deps.Projection.Image
	}
	req.SharpPreview = s.deps.Settings.Preview == settings.PreviewSharp
	label := jobLabel(d.Prompt, seed)
	if n := req.Batch(); n > 1 {
		label = fmt.Sprintf("%s · %d images", label, n)
	}
	kind, hs := s.nextKind, s.nextHires
	s.nextKind, s.nextHires = "", nil
	if kind != "" {
		label = kind + " · " + label // the queue says what the job is: Vary, Upscale ×2, Refine
	}
	k := s.keepJob(d, seed, &req, resumed)
	id, err := s.queue.Submit(req, label)
	if err != nil {
		if k != nil {
			k.Done()
		}
		if req.Init != nil {
			s.finisher.forget(req.Init)
		}
		s.say("%v", err)
		return false
	}
	if len(job.Notices) > 0 {
		s.sayAbout(id, noticeWarning, "%s", strings.Join(job.Notices, "\n"))
	} else {
		s.quiet()
	}
	d.Conditions = append([]compose.Condition(nil), d.Conditions...)
	d.LoRAs = append([]compose.LoRA(nil), d.LoRAs...)
	d.Seed = seed
	s.keptAs(id, k)
	s.model.Submitted(id, model.JobRecord{Draft: d, Peak: s.prediction.Peak, Hires: hs, Where: s.router.where()})
	s.updateButtons()
	return true
}

// cancelCurrent stops the running job (Cancel / Escape).
func (s *window) cancelCurrent() {
	if cur := s.model.Current(); cur != 0 {
		s.queue.Cancel(cur)
		s.finishedKept(cur)
		s.progress.stage.SetText("Cancelling…")
		return
	}
	for _, j := range s.queue.Jobs() {
		if !j.State.Finished() {
			s.queue.Cancel(j.ID)
			s.finishedKept(j.ID)
			return
		}
	}
}

// frameUpdate is the picture an update puts on the canvas, already over the checkerboard: the
// step's sharp preview (a real decode) when it carries one, else its fast preview, or the final
// image; nil for none. With kept (a run that starts from an image through a mask) the previews
// show the kept area as the original.
func frameUpdate(u jobs.Update, kept *keptArea) image.Image {
	switch {
	case u.Event != nil && u.Event.Preview != nil && u.Event.Preview.Sharp != nil:
		if kept != nil {
			return frameFinal(kept.over(u.Event.Preview.Sharp.Image))
		}
		return frameFinal(u.Event.Preview.Sharp.Image)
	case u.Event != nil && u.Event.Preview != nil && u.Event.Preview.Image != nil:
		if kept != nil {
			return overChecker(kept.over(upscaleNearest(u.Event.Preview.Image, 4)), 8)
		}
		return framePreview(u.Event.Preview.Image)
	case u.Event == nil && u.Job.State == jobs.Done && u.Job.Result != nil && u.Job.Result.Image != nil:
		return frameFinal(u.Job.Result.Image)
	}
	return nil
}

// onUpdate renders one queue update (UI goroutine); framed is frameUpdate's picture.
func (s *window) onUpdate(u jobs.Update, framed image.Image) {
	j := u.Job
	if u.Status != nil {
		s.showStatus(j, *u.Status)
		return
	}
	if u.Event != nil && u.Event.StepTime > 0 {
		s.lastStepTime = u.Event.StepTime
	}
	if u.Event != nil && !s.exploreEvent(j, *u.Event) && u.Event.Images > 1 {
		s.batchEvent(j, *u.Event, framed)
	}
	if u.Event != nil {
		s.progress.showEvent(j, *u.Event)
		s.timing.showRun(u.Event.Timings, u.Event.GPUClasses, denoiserTitle(*u.Event) == gpuTitle)
		s.timing.observe(*u.Event)
		s.memory.showLedger(u.Event.Memory, j, s.jobRecord(j.ID).Peak)
		if u.Event.Notice != "" {
			// Where the denoiser runs changed from what was asked (Metal declined: the CPU took over).
			s.sayAbout(j.ID, noticeWarning, "Job %d: %s", j.ID, u.Event.Notice)
		}
		if !ownJob(j) {
			return // an API job (Share this Mac) never takes over the artist's canvas
		}
		if sharp := u.Event.Preview; sharp != nil && sharp.Sharp != nil && framed != nil {
			s.canvas.showPreview(framed, j.Request.Width, j.Request.Height,
				fmt.Sprintf("Sharp preview: step %d through the real decoder at 1/%d size", sharp.Sharp.Step, sharp.Sharp.Downsample))
			s.canvasJob, s.sharpJob = j.ID, j.ID
			s.setShownFile("")
		} else if framed != nil && s.sharpJob != j.ID {
			s.canvas.showPreview(framed, j.Request.Width, j.Request.Height, s.previewNote())
			s.canvasJob = j.ID
			s.setShownFile("")
		}
		return
	}
	switch j.State {
	case jobs.Running:
		s.model.Started(j.ID)
		s.progress.start(j)
		s.timing.startRun()
		if ownJob(j) {
			s.seedUsed(j.Request.Seed)
			if j.Request.Batch() <= 1 && len(j.Request.Cells) == 0 {
				s.area.show(areaCanvas) // one image: it is made on the canvas
			}
		}
	case jobs.Done:
		s.finished(j)
		s.progress.done(j)
		s.timing.showResult(j.Result)
		s.showVariants(j.Result)
		if framed != nil && ownJob(j) {
			s.canvas.showFinal(framed, j.Result.Width, j.Result.Height)
			s.canvasJob = j.ID
			s.setShownFile("")
		}
		s.save(j)
	case jobs.Failed:
		rec, hadDraft := s.model.Job(j.ID)
		s.batchStopped(j)
		s.finished(j)
		s.progress.failed(j)
		if fault := (*mmapfile.FaultError)(nil); errors.As(j.Err, &fault) && fault.Kind == cmf.KindModelFile {
			s.modelLost(j, fault) // kept: it resumes from its checkpoint once the model is back
		} else {
			// A failed job is failed, not unfinished: the next launch does not offer it again
			// (one that rendered on another machine is offered here now, as a new job).
			s.finishedKept(j.ID)
			if errors.Is(j.Err, client.ErrServerGone) && hadDraft {
				s.offerRenderHere(j, rec.Draft) // render_here.go
			} else {
				s.sayKind(noticeError, "Job %d failed: %s", j.ID, plainJobError(j.Err, rec.Where))
			}
		}
	case jobs.Cancelled:
		s.batchStopped(j)
		s.finished(j)
		if s.model.Current() == 0 {
			s.progress.cancelled(j)
		}
	}
	s.queueList.show(s.queue.Jobs())
	s.updateButtons()
}

// ownJob reports whether the window's artist queued j (an API job of Share this Mac has an
// origin: its pictures go to the history, never onto the canvas).
func ownJob(j jobs.Job) bool { return j.Origin == "" }

// jobRecord is what the window remembers of job id (the zero record for one it did not submit).
func (s *window) jobRecord(id jobs.ID) model.JobRecord {
	r, _ := s.model.Job(id)
	return r
}

// previewNote is the caption over step previews: the calibrator's word while it works (or why
// it failed), else what the picture is.
func (s *window) previewNote() string {
	if s.deps.Calibrator != nil {
		if n := s.deps.Calibrator.Note(); n != "" {
			return n
		}
	}
	return "Preview: the model's current guess, projected from the latents"
}

// finished clears the running job when j was it, and forgets the draft of a job that made no
// image (a done job's draft goes with its image to save), so a long session of cancelled or
// failed jobs does not keep their condition images.
func (s *window) finished(j jobs.Job) {
	s.help.finished(j)
	delete(s.apiBatches, j.ID)
	if j.State != jobs.Done {
		s.model.Forget(j.ID)
		if j.Request.Init != nil {
			s.finisher.forget(j.Request.Init) // a job cancelled before it ran never took it
		}
	}
	running := s.model.Current() == j.ID
	s.model.Ended(j.ID) // its notices end with it (notices.go)
	if running {
		if s.predictedErr == nil {
			plan, _ := s.memoryPlan()
			s.memory.showPrediction(s.prediction, plan, s.deps.Geometry)
		}
	}
}

// save writes a finished image to the output folder off the UI goroutine, then lists it. An image
// that cannot be saved there is kept (keep) and another folder offered.
func (s *window) save(j jobs.Job) {
	defer s.finishedKept(j.ID) // after its image's write began: kept until the PNG is on disk
	rec, ok := s.model.Job(j.ID)
	d := rec.Draft
	s.model.Forget(j.ID)
	if j.Result == nil || j.Result.Image == nil || j.Result.Batch != nil {
		return // a batch's images were saved as each finished (batch.go)
	}
	var set *imagefile.Settings
	img := j.Result.Image
	switch pic, api := j.Owner.(apiPicture); {
	case ok:
		set = d.FileSettings(j.Result)
		if hs := rec.Hires; hs != nil {
			// An upscale records A1111's Hires fields: the pass's steps and what ran of them.
			h := *hs
			h.StepsRun = j.Result.StepsRun
			set.Hires = &h
		}
	case api:
		// A job from this window's server (Share this Mac): saved as its answer carries it, with
		// its origin, so it is in the history too.
		var err error
		if img, set, err = pic.Picture(j.Result); err != nil {
			s.say("Job %d (from %s) could not be saved: %v", j.ID, j.Origin, err)
			return
		}
	default:
		return
	}
	now := s.now()
	store := s.deps.History
	id := j.ID
	edited := j.Request.Init != nil
	s.saveJobImage(id, false, store, img, set, now, func(e history.Entry, err error) {
		if err != nil {
			s.keep(id, keptImage{img: img, set: set, at: now}, err)
			return
		}
		s.history.addSession(e)
		if edited {
			s.editedPath = e.Path // an inpaint or outpaint: Continue from this (continue_from.go)
		}
		if s.canvasJob == id {
			s.setShownFile(e.Path)
		}
		s.progress.stage.SetText(s.progress.stage.Text + " · saved " + shortPath(e.Path))
	})
}

// apiPicture is what a job from app/serve hands the window: its picture and settings.
type apiPicture interface {
	Picture(*pipeline.Result) (*image.NRGBA, *imagefile.Settings, error)
}

// seedUsed shows the seed of the run that started, for copying.
func (s *window) seedUsed(seed uint64) {
	s.lastSeed, s.haveSeed = seed, true
	s.options.showLastSeed(seed)
}

// restore fills the controls from a past image's settings.
func (s *window) restore(e history.Entry) {
	if e.Settings == nil {
		s.say("%s has no Easel settings in it (made by another tool?); only the image is shown.", shortPath(e.Path))
	} else {
		s.draft.LoRADirs = s.loraDirs(e.Path)
		note := s.draft.Restore(e.Settings)
		if n := s.restoreStart(e.Settings); n != "" {
			note = strings.TrimSpace(note + "\n" + n)
		}
		s.draftRestored()
		if note != "" {
			s.say("%s", note)
		} else {
			s.sayKind(noticeSuccess, "Settings restored from %s (%s takes the recipe before back).", shortPath(e.Path), undoKeyName())
		}
	}
	s.showFile(e.Path)
}

// draftRestored shows a draft whose settings were just replaced in the controls.
func (s *window) draftRestored() {
	s.prompt.load(&s.draft)
	s.options.load(&s.draft)
	s.conditions.refresh()
	s.loras.refresh()
	s.persistLoRAs()
	s.draftChanged()
}

// loraDirs are where restoring the image at path looks for its LoRAs: the LoRA folder, then the
// image's folder.
func (s *window) loraDirs(path string) []string {
	var dirs []string
	if s.deps.LoRADir != "" {
		dirs = append(dirs, s.deps.LoRADir)
	}
	return append(dirs, filepath.Dir(path))
}

// showFile puts an image file on the canvas, read off the UI goroutine (nothing when it cannot be
// read: the caller has said what happened).
func (s *window) showFile(path string) {
	s.area.show(areaCanvas)
	s.canvasJob = 0
	s.setShownFile(path)
	go func() {
		img, err := loadImage(path)
		if err != nil {
			return
		}
		framed, b := frameFinal(img), img.Bounds()
		s.deps.Do(func() { s.canvas.showFinal(framed, b.Dx(), b.Dy()) })
	}()
}

// close stops the queue (and any running generation) when the window closes, and waits for the
// images still being written.
func (s *window) close() {
	s.help.close()
	s.saveDraft()
	s.stopSharing()
	if s.studioShare != nil {
		s.studioShare.close() // studio_share.go
	}
	s.closeLend() // studio_lend.go: the studio's job in hand goes back first
	s.queue.Close()
	s.closeRenderOn() // studio_render_on.go
	s.discardKept()   // closing.go
	s.saving.Wait()
}

func randomSeed() uint64 {
	var b [4]byte
	rand.Read(b[:])
	return uint64(binary.LittleEndian.Uint32(b[:]))
}

// jobLabel is the queue's name for a job: the start of the prompt and the seed.
func jobLabel(prompt string, seed uint64) string {
	p := strings.Join(strings.Fields(prompt), " ")
	if r := []rune(p); len(r) > 40 {
		p = string(r[:39]) + "…"
	}
	if p == "" {
		p = "(no prompt)"
	}
	return fmt.Sprintf("%s · seed %d", p, seed)
}

func (s *window) now() time.Time {
	if s.deps.Now != nil {
		return s.deps.Now()
	}
	return time.Now()
}
