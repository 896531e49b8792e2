package ui

import (
	"crypto/rand"
	"easel/app/activity"
	"easel/app/unfinished"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2"

	"easel/app/compose"
	"easel/app/desktop"
	"easel/app/history"
	"easel/app/jobs"
	"easel/app/memplan"
	"easel/app/settings"

	"easel/ui/model"

	"easel/ui/canvasarea"
	"easel/ui/imagework"

	"easel/ui/keeping"
	"easel/ui/kit"
	"easel/ui/remote"
	"easel/ui/upscale"
)

// window is the main window's shell: the services, the model, the queue, and the regions and
// state it wires together, grouped by concern (window_state.go). All its methods run on the UI
// goroutine; the queue's updates reach it through deps.Do.
type window struct {
	deps Deps
	// model is the canvas document, the notice and the jobs' records, which the regions observe
	// and change through its actions (ui/model).
	model *model.Window
	win   fyne.Window
	queue *jobs.Queue
	// keeping keeps the jobs across a crash or a quit, saves the finished images in the
	// background and holds those that could not be saved (ui/keeping).
	keeping *keeping.Region
	// finisher runs the queue's jobs on deps.Generator, pasting runs from a start image back.
	finisher *imagework.Finishing

	regions    // the panels of the three regions
	controls   // Generate, Cancel and the lines around them
	remoteWork // rendering elsewhere, sharing, the studio
	shown      // what the canvas shows
	questions  // the dialogs on screen
	undoing    // ⌘Z
	closing    // quitting with jobs, and the draft kept for the next launch
	nextRun    // what the next submit is, and what the draft predicts
	// upscales are the learned upscalers at work: the runner held, the upscale running (ui/upscale).
	upscales *upscale.Upscaling
}

func newWindow(deps Deps) *window {
	draft := compose.NewDraft(deps.Settings)
	draft.LoRAs = append([]compose.LoRA(nil), deps.LoRAs...) // the list kept last time
	s := &window{deps: deps, model: model.New(draft)}
	if s.deps.Do == nil {
		s.deps.Do = fyne.Do
	}
	if s.deps.History == nil {
		s.deps.History = history.New(deps.Settings.OutputFolder)
	}
	if s.deps.Desktop == nil {
		s.deps.Desktop = desktop.System()
	}
	keep := &imagework.PreviewAreas{}
	s.router = &remote.Router{Local: deps.Generator}
	s.finisher = &imagework.Finishing{Generator: s.router}
	s.queue = jobs.New(s.finisher, func(u jobs.Update) {
		framed := frameUpdate(u, keep.Of(u)) // compositing a 2K image takes a while: not on the UI goroutine
		s.deps.Do(func() { s.onUpdate(u, framed) })
	})
	if !deps.Settings.AllowIdleSleep {
		s.queue.KeepAwake(func() func() { return activity.Hold(activity.Reason) })
	}
	return s
}

// draft is the recipe as it is now (a copy: the model's actions change it).
func (s *window) draft() compose.Draft { return s.model.Draft() }

// draftCopy is a copy of the draft, for its pointer methods that only read it (Plan, OutputSize…).
func (s *window) draftCopy() *compose.Draft {
	d := s.model.Draft()
	return &d
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
	plan, err := s.draftCopy().Plan()
	if err == nil && s.doc().Start != nil {
		plan.Width, plan.Height, err = s.outputWithExtend(s.doc().Extend)
		if err == nil {
			err = imagework.StartSizeProblem(plan.Width, plan.Height)
		}
	}
	plan.Metal = hasMetal && s.draft().Backend != "cpu"
	plan.SharpPreview = s.deps.Settings.Preview == settings.PreviewSharp
	return plan, err
}

// draftChanged re-predicts memory and updates whatever depends on the draft.
func (s *window) draftChanged() {
	s.options.RefreshSize()
	if s.work != nil {
		s.work.UpdateFrame()
	}
	plan, err := s.memoryPlan()
	s.predictedErr = err
	if err == nil {
		s.prediction = memplan.Predict(s.deps.Geometry, plan, s.deps.Budget)
		if s.model.Current() == 0 {
			s.memory.ShowPrediction(s.prediction, plan, s.deps.Geometry)
		}
	} else if s.model.Current() == 0 {
		s.memory.ShowError(err)
	}
	s.updateButtons()
	if s.explore != nil {
		s.explore.Refresh() // the predictions follow the budget and settings too, not only the model
	}
}

// canGenerate says whether Generate is allowed now, and why not.
func (s *window) canGenerate() (bool, string) {
	if s.predictedErr != nil {
		return false, s.predictedErr.Error()
	}
	if len(s.draft().Conditions) > 0 && !s.deps.Geometry.HasVision() {
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
	if s.queue.Pending() > 0 || s.upscales.Running() { // a learned upscale cancels too (ui/upscale)
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
	seed := s.draft().Seed
	if s.draft().RandomSeed {
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
// ui/keeping); it reports whether it was queued.
func (s *window) submitJob(d compose.Draft, seed uint64, job compose.Job, resumed *unfinished.Job) bool {
	req := job.Request
	if job.Prepared != nil {
		s.finisher.Expect(req.Init, &job)
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
	k := s.keeping.Keep(d, seed, &req, resumed)
	id, err := s.queue.Submit(req, label)
	if err != nil {
		if k != nil {
			k.Done()
		}
		if req.Init != nil {
			s.finisher.Forget(req.Init)
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
	s.keeping.KeptAs(id, k)
	s.model.Submitted(id, model.JobRecord{Draft: d, Peak: s.prediction.Peak, Hires: hs, Where: s.router.Where()})
	s.updateButtons()
	return true
}

// cancelCurrent stops the running job (Cancel / Escape).
func (s *window) cancelCurrent() {
	if s.upscales.Cancel() {
		return
	}
	if cur := s.model.Current(); cur != 0 {
		s.queue.Cancel(cur)
		s.keeping.Finished(cur)
		s.progress.Stage.SetText("Cancelling…")
		return
	}
	for _, j := range s.queue.Jobs() {
		if !j.State.Finished() {
			s.queue.Cancel(j.ID)
			s.keeping.Finished(j.ID)
			return
		}
	}
}

// seedUsed shows the seed of the run that started, for copying.
func (s *window) seedUsed(seed uint64) {
	s.lastSeed, s.haveSeed = seed, true
	s.options.ShowLastSeed(seed)
}

// restore fills the controls from a past image's settings.
func (s *window) restore(e history.Entry) {
	if e.Settings == nil {
		s.say("%s has no Easel settings in it (made by another tool?); only the image is shown.", shortPath(e.Path))
	} else {
		note := s.model.Restore(e.Settings, s.loraDirs(e.Path))
		if n := s.work.RestoreStart(e.Settings); n != "" {
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
	s.loras.Keep()
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
	s.area.Show(canvasarea.Canvas)
	s.canvasJob = 0
	s.setShownFile(path)
	go func() {
		img, err := loadImage(path)
		if err != nil {
			return
		}
		framed, b := canvasarea.FrameFinal(img), img.Bounds()
		s.deps.Do(func() { s.canvas.ShowFinal(framed, b.Dx(), b.Dy()) })
	}()
}

// close stops the queue (and any running generation) when the window closes, and waits for the
// images still being written.
func (s *window) close() {
	s.help.Close()
	s.upscales.Close() // ui/upscale
	s.saveDraft()
	s.remote.Leave() // sharing stops; the studio's job in hand goes back first
	s.queue.Close()
	s.remote.Close()
	// The kept jobs go (Discard and quit) or their checkpoint writes end; the images being written
	// are on disk (ui/keeping).
	s.keeping.Close(s.discardOnClose)
}

func randomSeed() uint64 {
	var b [4]byte
	rand.Read(b[:])
	return uint64(binary.LittleEndian.Uint32(b[:]))
}

// jobLabel is the queue's name for a job: the start of the prompt and the seed (ui/kit).
func jobLabel(prompt string, seed uint64) string { return kit.JobLabel(prompt, seed) }

// promptLabel is the start of the prompt, as the queue shows it (ui/kit).
func promptLabel(prompt string) string { return kit.PromptLabel(prompt) }

func (s *window) now() time.Time {
	if s.deps.Now != nil {
		return s.deps.Now()
	}
	return time.Now()
}
