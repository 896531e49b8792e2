package ui

import (
	"easel/app/jobs"
	"easel/app/settings"
	"easel/engine/lora"
	"easel/ui/kit"
	"easel/ui/model"
	"easel/ui/queue"
	"easel/ui/recipe"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app"

	"easel/ui/canvasarea"

	"easel/ui/progress"

	"easel/ui/gallery"
	"easel/ui/keeping"
	"easel/ui/setup"
)

// NewMainWindow builds the main window in three regions (DESIGN §8): the recipe on the left (the
// prompt, the everyday settings, folding sections), the canvas in the centre with the progress,
// a live strip of memory and time and the queue under it, the gallery on the right (the latest
// batch and the history). Closing it cancels every job.
func NewMainWindow(a fyne.App, deps Deps) fyne.Window {
	w, _ := newMainWindow(a, deps)
	return w
}

func newMainWindow(a fyne.App, deps Deps) (fyne.Window, *window) {
	s := newWindow(deps)
	s.drafts = keeping.NewDraft(deps.DraftStore, s.model)
	s.resumeErr = s.drafts.Resume()
	w := a.NewWindow(app.Name)
	s.win = w
	s.build()
	if s.doc().Start != nil { // the resumed canvas: the start image, its mask and extension
		s.work.Reload()
	}
	w.SetContent(s.layout())
	w.SetOnDropped(s.work.Drop)
	s.installShortcuts()
	w.SetOnClosed(s.close)
	w.SetCloseIntercept(s.askClose)
	w.Resize(fyne.NewSize(1280, 800))
	if deps.SettingsErr != nil {
		s.say("%v", deps.SettingsErr)
	} else if s.resumeErr != nil {
		s.say("%v", s.resumeErr)
	}
	if deps.ScanHistory {
		s.scanHistory()
	}
	s.draftChanged()
	s.keeping.OfferResume()
	w.Canvas().Focus(s.prompt.Text) // type, then ⌘↩
	if deps.Settings.Share || deps.Settings.RenderOn != "" {
		s.applyNetwork(deps.Settings)
	}
	s.remote.ResumeStudio()
	return w, s
}

// build makes the panels.
func (s *window) build() {
	s.newNoticeView()
	s.blocked = widget.NewLabel("")
	s.blocked.Wrapping = fyne.TextWrapWord
	s.blocked.Importance = widget.DangerImportance
	s.blocked.Hide()
	s.generateBtn = widget.NewButtonWithIcon("Generate", theme.MediaPlayIcon(), s.generate)
	s.generateBtn.Importance = widget.HighImportance
	s.cancelBtn = widget.NewButtonWithIcon("Cancel", theme.MediaStopIcon(), s.cancelCurrent)
	s.prompt = recipe.NewPrompt(s.model, s.keys())
	s.help = s.newPromptHelp()
	s.conditions = recipe.NewConditions(s.model, recipe.ConditionsActions{Add: func() { s.work.PickImages() },
		Paste: func() { s.work.PasteCondition() }, Move: func(i, d int) { s.work.MoveCondition(i, d) },
		Remove: func(i int) { s.work.RemoveCondition(i) }, Shown: func() {
			if s.sections != nil {
				s.sections.Open(sectionConditions) // what was just added is in view
			}
		}})
	s.fast = s.newFastDrafts()
	s.loras = recipe.NewLoRAs(s.model, s.fast.Box, recipe.LoRAsActions{Pick: s.pickFile, Folder: s.deps.LoRADir,
		Save: func(ls []settings.LoRA) error { // the list is kept only when the window has a store
			if s.deps.LoRAStore == nil {
				return nil
			}
			return s.deps.LoRAStore.Save(ls)
		},
		Say: s.say,
		Shown: func() {
			if s.sections != nil {
				s.sections.Open(sectionLoRAs)
			}
		},
		ReadPreset: func(path string) *lora.Preset { pr, _ := recipe.PresetOf(path); return pr },
		Do:         s.deps.Do, Refreshed: func() { s.fast.Refresh() }})
	s.fast.Presets = s.loras.Presets
	s.options = recipe.NewOptions(s.model, s.keys(), recipe.OptionsActions{SetBackend: s.setBackend, ChooseModel: s.pickModel,
		FollowedSize: s.followedSize, Copy: s.copyText, MaxCount: MaxWindowCount})
	s.canvas = canvasarea.NewView(func() { s.work.MaskChanged() }, func(side int) { s.work.ExtendSide(side) })
	s.canvas.Editor.Frame = s.frameActions() // canvas_frame.go
	s.keeping = s.newKeeping()               // ui/keeping
	s.lostModel = setup.NewModelLost(s.win, s.show, s.pickModel, s.showSettings)
	s.actions = s.newSavedImage() // ui/savedimage
	s.canvas.Tools.Objects = []fyne.CanvasObject{s.keeping.SaveTo, s.actions.Reveal, s.actions.Copy}
	s.canvas.Footer.Objects = []fyne.CanvasObject{layout.NewSpacer(), s.actions.Continue, s.actions.Refine}
	s.progress = progress.NewView()
	s.buildRemoteWork() // remote_work.go: s.remote and its indicator, s.network
	s.memory = progress.NewMemoryPanel(s.model)
	s.timing = progress.NewTimingPanel(progress.MemoryLabelWidth)
	s.strip = progress.NewStrip(s.memory, s.timing, s.win)
	s.queueList = queue.NewList(queue.ListActions{
		Cancel:    func(id jobs.ID) { s.queue.Cancel(id) },
		Placement: s.remote.PlacementOf,
		Lent:      s.remote.LentRowObject,
	})
	s.history = gallery.NewHistory(gallery.HistoryActions{Folder: func() string { return s.deps.Settings.OutputFolder }, RevealLabel: s.deps.Desktop.Label, UseAll: s.useAll, Menu: s.actions.Menu})
	s.upscales = s.newUpscaling()
	s.batch = s.newBatch() // batch.go
	s.sheet = s.batch.Sheet
	s.work = newImageWork(s)
	s.explore = s.newExplore() // explore.go
	s.area = canvasarea.NewArea(s.canvas.Box, s.sheet.Box, s.explore.Sheet.Box)
	// Whatever changes the draft (a field, a restore, an undo), the size, the frame, the memory
	// prediction and Generate follow it.
	s.model.Observe(model.DraftChanged, func(model.Change) { s.draftChanged() })
}

// layout arranges the three regions (regions.go): the recipe, the canvas, the gallery.
func (s *window) layout() fyne.CanvasObject {
	return &fyne.Container{Layout: regionsLayout{}, Objects: []fyne.CanvasObject{s.recipeRegion(), s.canvasRegion(), s.galleryRegion()}}
}

// The recipe's folding sections (besides Work on an image, which has its own), in s.sections.
const (
	sectionConditions = iota
	sectionLoRAs
	sectionAdvanced
	sectionExplore
)

// recipeRegion is the left column: the prompt, the everyday settings, the folding sections, and
// Generate with what it says under it.
func (s *window) recipeRegion() fyne.CanvasObject {
	shortcut := widget.NewLabel(shortcutHint())
	shortcut.Importance = widget.LowImportance
	shortcut.Wrapping = fyne.TextWrapWord
	actions := container.NewVBox(container.NewGridWithColumns(2, s.generateBtn, s.cancelBtn), s.blocked, shortcut, s.noticeBox)
	s.sections = widget.NewAccordion(
		widget.NewAccordionItem("Condition images", s.conditions.Box),
		widget.NewAccordionItem("LoRAs", s.loras.Box),
		widget.NewAccordionItem("Advanced", s.options.Advanced),
		widget.NewAccordionItem("Explore", s.explore.Box),
	)
	s.sections.MultiOpen = true
	if len(s.draft().Conditions) > 0 {
		s.sections.Open(sectionConditions)
	}
	if len(s.draft().LoRAs) > 0 {
		s.sections.Open(sectionLoRAs)
	}
	// Fyne draws the scroll bar over the content, ScrollBarSmall in from the edge: a gutter of twice
	// that keeps the resting bar off the fields' right edges.
	gutter := canvas.NewRectangle(color.Transparent)
	gutter.SetMinSize(fyne.NewSize(2*theme.Size(theme.SizeNameScrollBarSmall), 0))
	// The folding sections measure themselves again when what they show changes (kit.Remeasured).
	work := s.work.Box()
	if a, ok := work.(*widget.Accordion); ok {
		work = kit.Remeasured(a)
	}
	s.column = container.NewVScroll(container.NewBorder(nil, nil, nil, gutter,
		container.NewVBox(s.prompt.Box, s.options.Box, s.help.Box, work, kit.Remeasured(s.sections))))
	return container.NewBorder(nil, actions, nil, nil, container.NewStack(s.column, newWheelToColumn(s.column)))
}

// canvasRegion is the centre: the canvas, the batch's sheet or Explore's grid (canvas_area.go)
// with their switches, then the progress line, the live strip (memory and time, Details for the
// full panels) and the queue.
func (s *window) canvasRegion() fyne.CanvasObject {
	return container.NewBorder(s.area.Bar, container.NewVBox(s.network, s.progress.Box, s.strip.Box, widget.NewSeparator(), s.queueList.Box), nil, nil, s.area.Stack)
}

// galleryRegion is the right column: the history, always visible.
func (s *window) galleryRegion() fyne.CanvasObject {
	return container.NewVScroll(s.history.Box)
}

// scanHistory reads the output folder off the UI goroutine.
func (s *window) scanHistory() {
	store := s.deps.History
	go func() {
		entries, errs := store.Scan()
		s.deps.Do(func() { s.history.AddScanned(entries, errs) })
	}()
}
