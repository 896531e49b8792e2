package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app"
)

// NewMainWindow builds the main window: the prompt, condition images and image settings on the
// left; the canvas with progress and the queue in the middle; memory, compute time and history
// on the right. Closing it cancels every job.
func NewMainWindow(a fyne.App, deps Deps) fyne.Window {
	w, _ := newMainWindow(a, deps)
	return w
}

func newMainWindow(a fyne.App, deps Deps) (fyne.Window, *studio) {
	s := newStudio(deps)
	w := a.NewWindow(app.Name)
	s.win = w
	s.build()
	w.SetContent(s.layout())
	w.SetOnDropped(s.dropped)
	s.installShortcuts()
	w.SetOnClosed(s.close)
	w.Resize(fyne.NewSize(1400, 860))
	if deps.SettingsErr != nil {
		s.say("%v", deps.SettingsErr)
	}
	if deps.ScanHistory {
		s.scanHistory()
	}
	s.draftChanged()
	s.offerResume()
	if deps.Settings.Share || deps.Settings.RenderOn != "" {
		s.applyNetwork(deps.Settings)
	}
	return w, s
}

// build makes the panels.
func (s *studio) build() {
	s.message = widget.NewLabel("")
	s.message.Wrapping = fyne.TextWrapWord
	s.message.Importance = widget.WarningImportance
	s.message.Hide()
	s.blocked = widget.NewLabel("")
	s.blocked.Wrapping = fyne.TextWrapWord
	s.blocked.Importance = widget.DangerImportance
	s.blocked.Hide()
	s.generateBtn = widget.NewButtonWithIcon("Generate", theme.MediaPlayIcon(), s.generate)
	s.generateBtn.Importance = widget.HighImportance
	s.cancelBtn = widget.NewButtonWithIcon("Cancel", theme.MediaStopIcon(), s.cancelCurrent)
	s.prompt = newPromptPanel(s)
	s.conditions = newConditionsPanel(s)
	s.loras = newLorasPanel(s)
	s.options = newOptionsPanel(s)
	s.canvas = newCanvasView(s.maskChanged, s.extendSide)
	s.actions = newImageActions(s)
	s.canvas.tools.Objects = []fyne.CanvasObject{s.actions.saveTo, s.actions.reveal, s.actions.copy}
	s.canvas.footer.Objects = []fyne.CanvasObject{layout.NewSpacer(), s.actions.refine}
	s.progress = newProgressView()
	s.memory = newMemoryPanel(s)
	s.timing = newTimingPanel()
	s.queueList = newQueuePanel(s)
	s.history = newHistoryPanel(s)
	s.sheet = s.newSheet()
	s.work = newImageWorkPanel(s)
}

// layout arranges the three columns.
func (s *studio) layout() fyne.CanvasObject {
	shortcut := widget.NewLabel(shortcutHint())
	shortcut.Importance = widget.LowImportance
	actions := container.NewVBox(container.NewGridWithColumns(2, s.generateBtn, s.cancelBtn), s.blocked, shortcut, s.message)
	left := container.NewBorder(nil, actions, nil, nil, container.NewVScroll(container.NewVBox(
		s.prompt.box, widget.NewSeparator(), s.conditions.box, widget.NewSeparator(), s.work.box, widget.NewSeparator(), s.loras.box, widget.NewSeparator(), s.options.box,
	)))
	middle := container.NewBorder(nil, container.NewVBox(s.progress.box, widget.NewSeparator(), s.queueList.box), nil, nil, s.canvas.box)
	right := container.NewVScroll(container.NewVBox(s.sheet.box, s.memory.box, widget.NewSeparator(), s.timing.box, widget.NewSeparator(), s.history.box))
	inner := container.NewHSplit(middle, right)
	inner.Offset = 0.64
	outer := container.NewHSplit(left, inner)
	outer.Offset = 0.26
	return outer
}

// scanHistory reads the output folder off the UI goroutine.
func (s *studio) scanHistory() {
	store := s.deps.History
	go func() {
		entries, errs := store.Scan()
		s.deps.Do(func() { s.history.addScanned(entries, errs) })
	}()
}
