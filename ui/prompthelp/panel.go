package prompthelp

import (
	"context"
	"errors"
	"fmt"
	"image"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/jobs"
	"easel/app/memplan"
	"easel/app/settings"
	"easel/engine/imageio"
	"easel/ui/model"
)

// Host is what the panel needs of the window around it.
type Host struct {
	// Settings are the window's settings now: the model file the writer opens, and whether each
	// finished image is checked (CheckImages).
	Settings func() settings.Settings
	// Memory is the model's geometry and the device budget, for a writing's memory prediction.
	Memory func() (memplan.Geometry, int64)
	// Shown is the picture on the canvas now.
	Shown func() Shown
	// SetCaption writes the canvas's caption (a Check's summary beside the picture it checked).
	SetCaption func(text string)
	// ShowWriting shows a writing's memory in the memory panel while no job runs; WritingEnded
	// puts the draft's prediction back.
	ShowWriting  func(what string, need memplan.WritingPrediction)
	WritingEnded func()
	// Do runs f on the UI goroutine.
	Do func(f func())
}

// Shown is the picture on the canvas: a job's (Job) or a saved file's (Path, "" while a preview
// or an unsaved picture is shown); Final when it is a finished picture, not a preview.
type Shown struct {
	Job   jobs.ID
	Path  string
	Final bool
}

// Key names a picture the canvas may show: a job's (Job), else a saved file's (Path).
type Key struct {
	Job  jobs.ID
	Path string
}

// Panel is the prompt help's controls and the writing in progress.
type Panel struct {
	m    *model.Window
	host Host

	Expand, Describe, Stop *widget.Button
	CheckNow               *widget.Button // Check the picture shown against the prompt, on demand
	Source                 *widget.Select // what Describe looks at
	Suggestion             *widget.Entry  // the text being written, editable once done
	Accept, Discard, Undo  *widget.Button
	Status                 *widget.Label
	CheckHint              *widget.Label // where Check after every image is turned on (Settings)
	Checks                 *widget.Label // the last Check's image, then its ✓ / ✗ lines
	SuggestionBox          *fyne.Container
	Box                    fyne.CanvasObject

	// idea is the prompt before the last accepted suggestion (Undo puts it back).
	idea    string
	hasIdea bool
	// lastImage is the latest finished picture (what "Picture shown" means before it is saved).
	lastImage *image.NRGBA
	cancel    context.CancelFunc // the running writing's, nil when idle
	// waiting are Checks asked for while a writing ran (every image of a batch, with Check on in
	// Settings); each starts when the one before ends.
	waiting []func()
	// file is the model file the writer reads, opened off the UI goroutine (writer.go).
	file writerFile
}

// Describe's sources.
const (
	SourceShown = "Picture shown"
	SourceStart = "Start image"
)

// New builds the panel on the window model m.
func New(m *model.Window, host Host) *Panel {
	if host.Do == nil {
		host.Do = fyne.Do
	}
	h := &Panel{m: m, host: host}
	h.Expand = widget.NewButtonWithIcon("Expand", theme.ContentAddIcon(), h.runExpand)
	h.Describe = widget.NewButtonWithIcon("Describe", theme.VisibilityIcon(), h.runDescribe)
	h.Stop = widget.NewButtonWithIcon("Stop", theme.MediaStopIcon(), h.stopWriting)
	h.Stop.Hide()
	h.Source = widget.NewSelect(nil, nil)
	h.Source.PlaceHolder = "Image to describe"
	h.Source.OnChanged = func(string) {}
	h.Suggestion = widget.NewMultiLineEntry()
	h.Suggestion.Wrapping = fyne.TextWrapWord
	h.Suggestion.SetMinRowsVisible(4)
	h.Accept = widget.NewButtonWithIcon("Use as prompt", theme.ConfirmIcon(), h.acceptSuggestion)
	h.Accept.Importance = widget.HighImportance
	h.Discard = widget.NewButtonWithIcon("Discard", theme.CancelIcon(), h.discardSuggestion)
	h.Undo = widget.NewButtonWithIcon("Undo", theme.ContentUndoIcon(), h.undoAccept)
	h.Undo.Hide()
	h.Status = widget.NewLabel("")
	h.Status.Importance = widget.LowImportance
	h.Status.Truncation = fyne.TextTruncateEllipsis
	h.CheckHint = widget.NewLabel("Check every new image: Settings")
	h.CheckHint.Importance = widget.LowImportance
	h.CheckHint.Truncation = fyne.TextTruncateEllipsis
	h.Status.Hide() // shown with its first word: empty, it left a blank row under the source
	h.CheckNow = widget.NewButtonWithIcon("Check picture", theme.SearchIcon(), h.runCheckNow)
	h.Checks = widget.NewLabel("")
	h.Checks.Wrapping = fyne.TextWrapWord
	h.Checks.Hide()
	h.SuggestionBox = container.NewVBox(h.Suggestion, container.NewGridWithColumns(2, h.Accept, h.Discard))
	h.SuggestionBox.Hide()
	h.Box = container.NewVBox(
		container.NewGridWithColumns(3, h.Expand, h.Describe, h.Stop),
		h.Source, h.SuggestionBox, h.Undo, h.Status, container.NewBorder(nil, nil, nil, h.CheckNow, h.CheckHint), h.Checks,
	)
	h.RefreshSources()
	// The start image and the condition images are Describe's sources: the list follows them.
	m.Observe(model.CanvasChanged|model.DraftChanged, func(model.Change) { h.RefreshSources() })
	return h
}

// Writing reports whether a writing runs now.
func (h *Panel) Writing() bool { return h.cancel != nil }

// Waiting is how many Checks wait for the writing under way.
func (h *Panel) Waiting() int { return len(h.waiting) }

// HoldWriter keeps the writer's model from opening until release is called, so a writing can
// be stopped before it writes anything (tests).
func (h *Panel) HoldWriter() (release func()) {
	h.file.mu.Lock()
	return h.file.mu.Unlock
}

// RefreshSources lists what Describe can look at now.
func (h *Panel) RefreshSources() {
	if h == nil {
		return // the window is still being built
	}
	opts := []string{SourceShown}
	if h.m.Canvas().Start != nil {
		opts = append(opts, SourceStart)
	}
	for i := range h.m.Draft().Conditions {
		opts = append(opts, fmt.Sprintf("Condition image %d", i+1))
	}
	if slices.Equal(h.Source.Options, opts) && slices.Contains(opts, h.Source.Selected) {
		return
	}
	h.Source.Options = opts
	if !slices.Contains(opts, h.Source.Selected) {
		h.Source.Selected = SourceShown
	}
	h.Source.Refresh()
}

// sourceImage is the image Describe looks at.
func (h *Panel) sourceImage() (*image.NRGBA, error) {
	switch sel := h.Source.Selected; {
	case sel == SourceStart && h.m.Canvas().Start != nil:
		return h.m.Canvas().Start.Image.Image, nil
	case strings.HasPrefix(sel, "Condition image "):
		var n int
		fmt.Sscanf(sel, "Condition image %d", &n)
		conds := h.m.Draft().Conditions
		if n < 1 || n > len(conds) {
			return nil, errors.New("that condition image was removed; choose another")
		}
		return conds[n-1].Image, nil
	}
	return h.shownImage()
}

// shownImage is the picture on the canvas: the saved file shown, else the latest finished one.
func (h *Panel) shownImage() (*image.NRGBA, error) {
	if p := h.host.Shown().Path; p != "" {
		return imageio.Load(p)
	}
	if h.lastImage != nil {
		return h.lastImage, nil
	}
	return nil, errors.New("no picture is shown yet: make one, pick one in History, or choose a start or condition image")
}

// Close releases the writer's model file (the window closed).
func (h *Panel) Close() {
	h.stopWriting()
	h.file.close()
}

// say shows a warning in the window's notice.
func (h *Panel) say(format string, args ...any) { h.m.Say(model.NoticeWarning, format, args...) }
