package ui

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/jobs"
	"easel/app/memplan"
	"easel/app/textgen"
	"easel/engine/imageio"
	"easel/engine/qwen3vl"
)

// promptHelp is Expand, Describe and Check (app/textgen) beside the prompt: the model's own text
// encoder writes into a suggestion the artist accepts, edits or discards. Expand starts from the
// prompt (the idea); Describe from the picture shown, the start image or a condition image; Check,
// when on, asks after each finished picture whether each element of its prompt is in it. One
// writing runs at a time, off the UI goroutine, on the CPU beside the queue; Stop cancels it and
// leaves the prompt as it was.
type promptHelp struct {
	s *window

	expand, describe, stop *widget.Button
	checkNow               *widget.Button // Check the picture shown against the prompt, on demand
	source                 *widget.Select // what Describe looks at
	suggestion             *widget.Entry  // the text being written, editable once done
	accept, discard, undo  *widget.Button
	status                 *widget.Label
	checkHint              *widget.Label // where Check after every image is turned on (Settings)
	checks                 *widget.Label // the last Check's image, then its ✓ / ✗ lines
	suggestionBox          *fyne.Container
	box                    fyne.CanvasObject

	// idea is the prompt before the last accepted suggestion (Undo puts it back).
	idea    string
	hasIdea bool
	// lastImage is the latest finished picture (what "Picture shown" means before it is saved).
	lastImage *image.NRGBA
	cancel    context.CancelFunc // the running writing's, nil when idle
	// waiting are Checks asked for while a writing ran (every image of a batch, with Check on in
	// Settings); each starts when the one before ends.
	waiting []func()

	mu          sync.Mutex // guards the writer, opened off the UI goroutine
	writer      *textgen.Writer
	closeWriter func() error
	writerPath  string
}

// Describe's sources.
const (
	sourceShown = "Picture shown"
	sourceStart = "Start image"
)

func newPromptHelp(s *window) *promptHelp {
	h := &promptHelp{s: s}
	h.expand = widget.NewButtonWithIcon("Expand", theme.ContentAddIcon(), h.runExpand)
	h.describe = widget.NewButtonWithIcon("Describe", theme.VisibilityIcon(), h.runDescribe)
	h.stop = widget.NewButtonWithIcon("Stop", theme.MediaStopIcon(), h.stopWriting)
	h.stop.Hide()
	h.source = widget.NewSelect(nil, nil)
	h.source.PlaceHolder = "Image to describe"
	h.source.OnChanged = func(string) {}
	h.suggestion = widget.NewMultiLineEntry()
	h.suggestion.Wrapping = fyne.TextWrapWord
	h.suggestion.SetMinRowsVisible(4)
	h.accept = widget.NewButtonWithIcon("Use as prompt", theme.ConfirmIcon(), h.acceptSuggestion)
	h.accept.Importance = widget.HighImportance
	h.discard = widget.NewButtonWithIcon("Discard", theme.CancelIcon(), h.discardSuggestion)
	h.undo = widget.NewButtonWithIcon("Undo", theme.ContentUndoIcon(), h.undoAccept)
	h.undo.Hide()
	h.status = widget.NewLabel("")
	h.status.Importance = widget.LowImportance
	h.status.Truncation = fyne.TextTruncateEllipsis
	h.checkHint = widget.NewLabel("Check every new image: Settings")
	h.checkHint.Importance = widget.LowImportance
	h.checkHint.Truncation = fyne.TextTruncateEllipsis
	h.status.Hide() // shown with its first word: empty, it left a blank row under the source
	h.checkNow = widget.NewButtonWithIcon("Check picture", theme.SearchIcon(), h.runCheckNow)
	h.checks = widget.NewLabel("")
	h.checks.Wrapping = fyne.TextWrapWord
	h.checks.Hide()
	h.suggestionBox = container.NewVBox(h.suggestion, container.NewGridWithColumns(2, h.accept, h.discard))
	h.suggestionBox.Hide()
	h.box = container.NewVBox(
		container.NewGridWithColumns(3, h.expand, h.describe, h.stop),
		h.source, h.suggestionBox, h.undo, h.status, container.NewBorder(nil, nil, nil, h.checkNow, h.checkHint), h.checks,
	)
	h.refreshSources()
	return h
}

// refreshSources lists what Describe can look at now.
func (h *promptHelp) refreshSources() {
	if h == nil {
		return // the window is still being built
	}
	opts := []string{sourceShown}
	if h.s.doc().Start != nil {
		opts = append(opts, sourceStart)
	}
	for i := range h.s.draft().Conditions {
		opts = append(opts, fmt.Sprintf("Condition image %d", i+1))
	}
	h.source.Options = opts
	if h.source.Selected == "" || !containsString(opts, h.source.Selected) {
		h.source.Selected = sourceShown
	}
	h.source.Refresh()
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// sourceImage is the image Describe looks at.
func (h *promptHelp) sourceImage() (*image.NRGBA, error) {
	s := h.s
	switch sel := h.source.Selected; {
	case sel == sourceStart && s.doc().Start != nil:
		return s.doc().Start.Image.Image, nil
	case strings.HasPrefix(sel, "Condition image "):
		var n int
		fmt.Sscanf(sel, "Condition image %d", &n)
		if n < 1 || n > len(s.draft().Conditions) {
			return nil, errors.New("that condition image was removed; choose another")
		}
		return s.draft().Conditions[n-1].Image, nil
	}
	return h.shownImage()
}

// shownImage is the picture on the canvas: the saved file shown, else the latest finished one.
func (h *promptHelp) shownImage() (*image.NRGBA, error) {
	if h.s.shownPath != "" {
		return imageio.Load(h.s.shownPath)
	}
	if h.lastImage != nil {
		return h.lastImage, nil
	}
	return nil, errors.New("no picture is shown yet: make one, pick one in History, or choose a start or condition image")
}

// openWriter opens the settings' model for writing (again when the model changed). It runs off
// the UI goroutine.
func (h *promptHelp) openWriter(path string) (*textgen.Writer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.writer != nil && h.writerPath == path {
		return h.writer, nil
	}
	if h.closeWriter != nil {
		h.closeWriter()
		h.writer, h.closeWriter = nil, nil
	}
	if path == "" {
		return nil, errors.New("no model is chosen: choose the model file in Settings first")
	}
	w, closeFile, err := textgen.OpenFile(path)
	if err != nil {
		if errors.Is(err, textgen.ErrNoHead) {
			return nil, errors.New(strings.TrimPrefix(err.Error(), textgen.ErrNoHead.Error()+": "))
		}
		return nil, err
	}
	h.writer, h.closeWriter, h.writerPath = w, closeFile, path
	return w, nil
}

// close releases the writer's model file (the window closed).
func (h *promptHelp) close() {
	h.stopWriting()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closeWriter != nil {
		h.closeWriter()
		h.writer, h.closeWriter = nil, nil
	}
}

// setStatus says what the writing did or does (and shows the line).
func (h *promptHelp) setStatus(text string) {
	h.status.SetText(text)
	h.status.Show()
}

// busy shows the controls of a running writing.
func (h *promptHelp) busy(on bool, what string) {
	if on {
		h.expand.Disable()
		h.describe.Disable()
		h.checkNow.Disable()
		h.stop.Show()
		h.setStatus(what)
		return
	}
	h.expand.Enable()
	h.describe.Enable()
	h.checkNow.Enable()
	h.stop.Hide()
	h.cancel = nil
}

// plan is the memory a writing needs (memplan.PredictWriting on the model's geometry): the status
// line says it, and a writing that does not fit the budget is refused before it starts.
func (h *promptHelp) plan(promptBytes int, img *image.NRGBA) memplan.WritingPrediction {
	p := memplan.WritingPlan{PromptTokens: 60 + promptBytes/4, MaxTokens: 300}
	if img != nil {
		// The image as Describe prepares it: at most a megapixel, a patch per 16×16 pixels and a
		// token per 2×2 patches.
		w, hgt := float64(img.Rect.Dx()), float64(img.Rect.Dy())
		scale := math.Min(1, math.Sqrt(float64(1<<20)/(w*hgt)))
		grid := [3]int{1, max(2, int(hgt*scale)/16), max(2, int(w*scale)/16)}
		p.Image, p.PromptTokens = &grid, p.PromptTokens+grid[1]*grid[2]/4
	}
	return memplan.PredictWriting(h.s.deps.Geometry, p, h.s.deps.Budget)
}

// write runs one use off the UI goroutine, streaming its text into the suggestion.
func (h *promptHelp) write(what string, need memplan.WritingPrediction, run func(ctx context.Context, w *textgen.Writer, o textgen.Options) (*textgen.Result, error), done func(*textgen.Result)) {
	if h.cancel != nil {
		if what == "Check" {
			h.waiting = append(h.waiting, func() { h.write(what, need, run, done) })
		} else {
			h.s.say("%s waits for the writing under way: let it finish, or Stop it, then ask again.", what)
		}
		return
	}
	if !need.Fits {
		h.s.say("%s needs about %s of memory while writing (the text encoder, its language head and cache), more than this machine's budget allows: close other apps, or use a smaller model file.", what, memplan.GB(need.Peak))
		h.suggestionBox.Hide()
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.busy(true, fmt.Sprintf("%s… (about %s in memory while writing)", what, memplan.GB(need.Peak)))
	if h.s.model.Current() == 0 { // a running job's panel shows its own ledger
		h.s.memory.showWriting(what, need)
	}
	path, do := h.s.deps.Settings.Model, h.s.deps.Do
	if do == nil {
		do = fyne.Do
	}
	go func() {
		defer cancel()
		w, err := h.openWriter(path)
		var r *textgen.Result
		if err == nil {
			opts := textgen.Options{Sampling: qwen3vl.DefaultSampling, OnText: func(p string) {
				do(func() { h.suggestion.Append(p) })
			}}
			r, err = run(ctx, w, opts)
		}
		stopped := ctx.Err() != nil // read before the deferred cancel
		do(func() {
			h.busy(false, "")
			if h.s.model.Current() == 0 {
				h.s.draftChanged() // the memory panel back to the draft's prediction
			}
			switch {
			case stopped:
				h.setStatus(what + " stopped; the prompt is as it was.")
				h.suggestionBox.Hide()
			case err != nil:
				h.setStatus(what + " failed")
				h.s.say("%s: %v", what, err)
				h.suggestionBox.Hide()
			default:
				h.setStatus(fmt.Sprintf("%s: %d tokens, %.1f tokens/s", what, r.Tokens, r.TokensPerSecond))
				done(r)
			}
			h.next()
		})
	}()
}

// next starts the first waiting Check, if any.
func (h *promptHelp) next() {
	if len(h.waiting) == 0 || h.cancel != nil {
		return
	}
	start := h.waiting[0]
	h.waiting = h.waiting[1:]
	start()
}

// startSuggestion empties the suggestion for a new writing (not while one runs: that one's text
// stays, and write says why the new one waits).
func (h *promptHelp) startSuggestion() {
	if h.cancel != nil {
		return
	}
	h.suggestion.SetText("")
	h.suggestionBox.Show()
}

// runExpand turns the prompt (the idea) into a suggestion.
func (h *promptHelp) runExpand() {
	idea := strings.TrimSpace(h.s.draft().Prompt)
	if idea == "" {
		h.s.say("Write a few words in the prompt first (a subject, a scene): Expand works from them.")
		return
	}
	h.startSuggestion()
	h.write("Expand", h.plan(len(idea), nil), func(ctx context.Context, w *textgen.Writer, o textgen.Options) (*textgen.Result, error) {
		return w.Expand(ctx, idea, o)
	}, func(r *textgen.Result) { h.suggestion.SetText(r.Text) })
}

// runDescribe writes a prompt for the chosen image.
func (h *promptHelp) runDescribe() {
	h.refreshSources()
	img, err := h.sourceImage()
	if err != nil {
		h.s.say("Describe: %v", err)
		return
	}
	h.startSuggestion()
	h.write("Describe", h.plan(len(textgen.DescribeQuestion), img), func(ctx context.Context, w *textgen.Writer, o textgen.Options) (*textgen.Result, error) {
		return w.Describe(ctx, img, "", o)
	}, func(r *textgen.Result) { h.suggestion.SetText(r.Text) })
}

// stopWriting cancels the running writing and the Checks waiting; the prompt is untouched.
func (h *promptHelp) stopWriting() {
	h.waiting = nil
	if h.cancel != nil {
		h.cancel()
	}
}

// acceptSuggestion makes the (possibly edited) suggestion the prompt; Undo restores the idea.
func (h *promptHelp) acceptSuggestion() {
	text := strings.TrimSpace(h.suggestion.Text)
	if text == "" {
		h.s.say("The model wrote nothing to use: ask again, or write the prompt yourself.")
		return
	}
	h.idea, h.hasIdea = h.s.draft().Prompt, true
	h.s.prompt.Text.SetText(text)
	h.suggestionBox.Hide()
	h.undo.Show()
}

// discardSuggestion drops the suggestion; the prompt stays as it was.
func (h *promptHelp) discardSuggestion() {
	h.stopWriting()
	h.suggestion.SetText("")
	h.suggestionBox.Hide()
}

// undoAccept puts the idea back in the prompt.
func (h *promptHelp) undoAccept() {
	if !h.hasIdea {
		return
	}
	h.s.prompt.Text.SetText(h.idea)
	h.hasIdea = false
	h.undo.Hide()
}

// finished is told of every finished job: when Check is on in Settings (CheckImages), a done
// picture is checked against the prompt that made it.
func (h *promptHelp) finished(j jobs.Job) {
	if j.State != jobs.Done || j.Result == nil || j.Result.Image == nil {
		return
	}
	h.lastImage = j.Result.Image
	if h.s.deps.Settings.CheckImages {
		h.checkPicture(j.Result.Image, j.Request.Prompt, fmt.Sprintf("job %d's image", j.ID), canvasKey{job: j.ID})
	}
}

// runCheckNow checks the picture shown (or the latest one) against the prompt as it is now.
func (h *promptHelp) runCheckNow() {
	img, err := h.shownImage()
	if err != nil {
		h.s.say("Check: %v", err)
		return
	}
	h.checkPicture(img, h.s.draft().Prompt, "the picture shown", h.shownKey())
}

// checkPicture asks whether each element of prompt is in img and lists the answers under a line
// naming the image (what); when the canvas still shows the image (at), its caption sums them up.
func (h *promptHelp) checkPicture(img *image.NRGBA, prompt, what string, at canvasKey) {
	var verdicts []textgen.Verdict
	h.write("Check", h.plan(len(prompt)*2, img), func(ctx context.Context, w *textgen.Writer, o textgen.Options) (*textgen.Result, error) {
		o.Sampling, o.OnText = qwen3vl.Sampling{}, nil // greedy: the answer does not depend on a seed
		v, r, err := w.Check(ctx, img, prompt, o)
		verdicts = v
		return r, err
	}, func(*textgen.Result) {
		var b strings.Builder
		fmt.Fprintf(&b, "Check of %s:\n", truncateRunes(what, 40))
		unsure := false
		for _, v := range verdicts {
			fmt.Fprintf(&b, "%s %s\n", v.Mark(), truncateRunes(v.Element, 48))
			unsure = unsure || !v.Answered
		}
		if unsure {
			h.s.sayKind(noticeInfo, "In the Check, ? means the model answered neither yes nor no about that element: look for yourself.")
		}
		h.checks.SetText(strings.TrimRight(b.String(), "\n"))
		h.checks.Show()
		h.captionChecks(at, verdicts)
	})
}

// truncateRunes shortens s to n characters with an ellipsis.
func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
