package ui

import (
	"context"
	"easel/ui/recipe"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"

	"easel/app"
	"easel/app/compose"
	"easel/app/jobs"
	"easel/app/memplan"
	"easel/app/settings"
	"easel/engine/convert"
	"easel/internal/golden"
)

// The window opens with every panel an artist needs, and renders at a usable size.
func TestMainWindowShowsEveryPanel(t *testing.T) {
	h := newHarness(t, 64e9)
	if h.w.Title() != app.Name {
		t.Errorf("title %q, want %q", h.w.Title(), app.Name)
	}
	markup := test.RenderToMarkup(h.w.Canvas())
	for _, want := range []string{"Prompt", "Negative prompt", "Transparent background", "Condition images", "LoRAs", "Advanced",
		"Size", "Steps", "Images", "CFG scale", "Seed", "Generate", "Cancel", "Queue",
		"Memory", "Predicted", "Time", "Details", "History", "Describe the image"} {
		if !strings.Contains(markup, want) {
			t.Errorf("window does not show %q", want)
		}
	}
	// Details opens the full panels, in plain words.
	test.Tap(h.s.strip.Details)
	details := test.RenderObjectToMarkup(h.w.Canvas().Overlays().Top())
	for _, want := range []string{"Memory — predicted for 1024×1024", "Denoiser weights", "Prompt cache", "VAE activations",
		"time by kernel class", "gemm", "attn", "conv", "matrix multiplies"} {
		if !strings.Contains(details, want) {
			t.Errorf("Details does not show %q", want)
		}
	}
	if b := h.w.Canvas().Capture().Bounds(); b.Dx() < 1000 || b.Dy() < 700 {
		t.Errorf("window renders at %v", b)
	}
	if h.s.generateBtn.Disabled() {
		t.Error("Generate is disabled with a budget that fits")
	}
	if !h.s.prompt.Negative.Disabled() {
		t.Error("the negative prompt is enabled with CFG off")
	}
}

// Typing the prompt and turning on transparency changes what the model will be asked; raising
// CFG enables the negative prompt.
func TestPromptTransparencyAndCFG(t *testing.T) {
	h := newHarness(t, 64e9)
	test.Type(h.s.prompt.Text, "a glass teapot")
	h.s.prompt.Transparent.SetChecked(true)
	req, err := h.s.draftCopy().Request(1)
	if err != nil {
		t.Fatal(err)
	}
	if want := "This is an RGBA image with transparency. a glass teapot. The image has alpha channel and the background is transparent."; req.Prompt != want {
		t.Errorf("prompt %q, want %q", req.Prompt, want)
	}
	h.s.options.CFG.SetValue(4)
	if h.s.prompt.Negative.Disabled() {
		t.Error("negative prompt still disabled at CFG 4")
	}
	test.Type(h.s.prompt.Negative, "blurry")
	if req, _ := h.s.draftCopy().Request(1); req.NegativePrompt != "blurry" || req.CFG != 4 {
		t.Errorf("request negative %q CFG %g", req.NegativePrompt, req.CFG)
	}
}

// Files dropped on the window become condition images in order, labelled with their encoded
// size; they can be reordered and removed; bad files and an eleventh image get a message.
func TestDropReorderRemoveAndLimits(t *testing.T) {
	h := newHarness(t, 64e9)
	wide := h.writePNG("wide.png", 200, 100)
	tall := h.writePNG("tall.png", 100, 200)
	bad := filepath.Join(h.dir, "notes.png")
	os.WriteFile(bad, []byte("not an image"), 0o644)

	h.s.work.Drop(fyne.NewPos(10, 10), []fyne.URI{storage.NewFileURI(wide), storage.NewFileURI(bad), storage.NewFileURI(tall)})
	h.pump("the dropped files", func() bool { return len(h.s.draft().Conditions) == 2 })
	if !h.s.message.Visible() || !strings.Contains(h.s.message.Text, "notes.png") {
		t.Errorf("message %q, want one naming notes.png", h.s.message.Text)
	}
	markup := test.RenderToMarkup(h.w.Canvas())
	for _, want := range []string{"1 · wide.png", "2 · tall.png", "200×100, encoded at 1440×736", "100×200, encoded at 736×1440", "2 of 10"} {
		if !strings.Contains(markup, want) {
			t.Errorf("condition list does not show %q", want)
		}
	}
	h.s.work.MoveCondition(1, -1)
	if h.s.draft().Conditions[0].Name != "tall.png" || !strings.Contains(test.RenderToMarkup(h.w.Canvas()), "1 · tall.png") {
		t.Error("moving the second image left did not put it first")
	}
	// The size menu's "from the last condition image" follows the order.
	h.s.options.SizeSelect.SetSelected(recipe.SizeFromImageLabel)
	if w, hh, _ := h.s.draftCopy().OutputSize(); w != 1440 || hh != 736 {
		t.Errorf("from last image: %d×%d, want wide.png's 1440×736", w, hh)
	}
	h.s.work.RemoveCondition(0)
	if len(h.s.draft().Conditions) != 1 || h.s.draft().Conditions[0].Name != "wide.png" {
		t.Errorf("after removing the first: %v", h.s.draft().Conditions)
	}

	var more []fyne.URI
	for i := range 10 {
		more = append(more, storage.NewFileURI(h.writePNG("more"+string(rune('a'+i))+".png", 64, 64)))
	}
	h.s.work.Drop(fyne.Position{}, more)
	h.pump("ten images", func() bool { return len(h.s.draft().Conditions) == compose.MaxConditions })
	if !strings.Contains(h.s.message.Text, "at most 10") || !strings.Contains(h.s.message.Text, "morej.png") {
		t.Errorf("message %q, want the eleventh (morej.png) refused", h.s.message.Text)
	}
}

// A pasted file path adds the file; text that names no file is left to the text field.
func TestPasteAFilePath(t *testing.T) {
	h := newHarness(t, 64e9)
	path := h.writePNG("pasted.png", 64, 64)
	cb := test.NewClipboard()
	cb.SetContent(path)
	if !h.s.work.PasteImage(cb, false) {
		t.Fatal("a pasted image path was not taken")
	}
	h.pump("the pasted file", func() bool { return len(h.s.draft().Conditions) == 1 })
	cb.SetContent("just some words")
	if h.s.work.PasteImage(cb, false) {
		t.Error("ordinary text was taken as an image")
	}
}

// Two Generates queue two jobs; the first shows its stage, step, s/step, ETA, timings, live
// memory and preview; the queued one is cancelled; the first finishes and is saved to history.
func TestQueueTwoJobsCancelOneAndFinish(t *testing.T) {
	h := newHarness(t, 64e9)
	test.Type(h.s.prompt.Text, "a fox in the snow")
	h.s.options.SizeSelect.SetSelected("16:9")
	test.Tap(h.s.generateBtn)
	test.Type(h.s.prompt.Text, ", at dusk")
	test.Tap(h.s.generateBtn)
	first := <-h.gen.started
	if first.Prompt != "a fox in the snow" || first.Width != 1376 || first.Height != 768 || first.Preview == nil {
		t.Fatalf("first request %q %d×%d", first.Prompt, first.Width, first.Height)
	}
	h.pump("job 1 running", func() bool { return h.s.model.Current() == 1 })
	h.gen.step <- struct{}{}
	h.gen.step <- struct{}{}
	h.pump("step 2", func() bool { return strings.Contains(h.s.progress.Stage.Text, "Step 2 of 4") })
	if got := h.s.progress.Rate.Text; got != "2.0 s/step · about 6 s left" {
		t.Errorf("rate %q", got)
	}
	if got := h.s.timing.Texts[0]; got != "6.0 s · 75 %" {
		t.Errorf("gemm %q, want 6.0 s · 75 %%", got)
	}
	if got := h.s.timing.StepText.Text; got != "Per step: 2.0–2.0 s (slowest: step 1; last 2.0 s)" {
		t.Errorf("step chart %q", got)
	}
	if h.s.canvas.Current == nil || h.s.canvas.IsFinal {
		t.Error("no step preview on the canvas")
	}
	if !h.s.actions.Copy.Disabled() {
		t.Error("Copy image is on while a preview is shown")
	}
	markup := test.RenderToMarkup(h.w.Canvas())
	for _, want := range []string{"Live 13", "#2 · queued", "#1 · running", "Generate (queue: 2)"} {
		if !strings.Contains(markup, want) {
			t.Errorf("window does not show %q during the run", want)
		}
	}
	test.Tap(h.s.strip.Details)
	details := test.RenderObjectToMarkup(h.w.Canvas().Overlays().Top())
	for _, want := range []string{"Memory — live, job 1", "Peak resident"} {
		if !strings.Contains(details, want) {
			t.Errorf("Details does not show %q during the run", want)
		}
	}
	h.w.Canvas().Overlays().Top().Hide()
	h.w.Canvas().Overlays().Remove(h.w.Canvas().Overlays().Top())
	if !h.s.haveSeed || h.s.lastSeed != first.Seed || !strings.Contains(h.s.options.LastSeed.Text, "Last seed") {
		t.Error("the running job's seed is not shown")
	}

	if !h.s.queue.Cancel(2) {
		t.Fatal("job 2 could not be cancelled")
	}
	h.pump("job 2 cancelled", func() bool { return strings.Contains(test.RenderToMarkup(h.w.Canvas()), "#2 · cancelled") })

	h.gen.step <- struct{}{}
	h.gen.step <- struct{}{}
	h.gen.release <- struct{}{}
	h.pump("job 1 saved", func() bool { return len(h.s.history.Entries) == 1 })
	if !h.s.canvas.IsFinal || !strings.Contains(h.s.progress.Stage.Text, "done") {
		t.Errorf("after the run: final %v, stage %q", h.s.canvas.IsFinal, h.s.progress.Stage.Text)
	}
	e := h.s.history.Entries[0]
	if e.Settings == nil || e.Settings.Prompt != "a fox in the snow" || e.Settings.Seed != first.Seed {
		t.Errorf("saved settings %+v", e.Settings)
	}
	if _, err := os.Stat(e.Path); err != nil {
		t.Errorf("saved image: %v", err)
	}
	if h.s.actions.Shown() != e.Path || h.s.actions.Copy.Disabled() || h.s.actions.Reveal.Disabled() {
		t.Errorf("the saved final image (%s) is not the one Show in folder and Copy image act on (%q)", e.Path, h.s.actions.Shown())
	}
	if h.s.queue.Pending() != 0 || !h.s.cancelBtn.Disabled() {
		t.Error("queue not empty or Cancel still enabled after everything ended")
	}
	if h.s.model.Live() != 0 {
		t.Errorf("%d job drafts kept after every job ended (the cancelled one's too)", h.s.model.Live())
	}
	// Clicking the history image restores its settings into the controls.
	test.Type(h.s.prompt.Text, " and more")
	h.s.restore(e)
	if h.s.prompt.Text.Text != "a fox in the snow" || h.s.options.SeedMode.Selected != "Fixed" || h.s.options.SizeSelect.Selected != "16:9" {
		t.Errorf("restored prompt %q seed mode %q size %q", h.s.prompt.Text.Text, h.s.options.SeedMode.Selected, h.s.options.SizeSelect.Selected)
	}
}

// Cancel (and Escape in the prompt) stops the running job.
func TestEscapeCancelsTheRunningJob(t *testing.T) {
	h := newHarness(t, 64e9)
	test.Tap(h.s.generateBtn)
	<-h.gen.started
	h.pump("running", func() bool { return h.s.model.Current() == 1 })
	h.s.prompt.Text.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	h.pump("cancelled", func() bool {
		j := h.s.queue.Jobs()
		return len(j) == 1 && j[0].State == jobs.Cancelled && h.s.model.Current() == 0
	})
	if !strings.Contains(h.s.progress.Stage.Text, "cancelled") {
		t.Errorf("stage %q", h.s.progress.Stage.Text)
	}
	if h.s.model.Live() != 0 {
		t.Errorf("the cancelled job's draft is still kept")
	}
}

// When the prediction does not fit the budget, Generate is disabled, the panel says so and
// offers the largest size that fits; taking it enables Generate.
func TestGenerateDisabledWhenMemoryDoesNotFit(t *testing.T) {
	h := newHarness(t, 10e9)
	h.s.options.SizeSelect.SetSelected("16:9")
	h.s.options.ScaleRadio.SetSelected("2K")
	h.s.options.CFG.SetValue(4)
	if !h.s.generateBtn.Disabled() {
		t.Fatal("Generate is enabled for 2K 16:9 with CFG on a 10 GB budget")
	}
	if v := h.s.memory.Verdict.Text; !strings.Contains(v, "Does not fit") || !strings.Contains(v, "largest size") {
		t.Errorf("verdict %q", v)
	}
	if !h.s.memory.UseSize.Visible() {
		t.Fatal("no suggested size offered")
	}
	test.Tap(h.s.generateBtn)
	if len(h.s.queue.Jobs()) != 0 {
		t.Error("a disabled Generate queued a job")
	}
	test.Tap(h.s.memory.UseSize)
	if h.s.generateBtn.Disabled() || h.s.draft().Size != compose.SizeCustom {
		t.Errorf("after taking the suggested size Generate is disabled (%s)", h.s.memory.Verdict.Text)
	}
}

// An image on the system clipboard is added as a condition image named "pasted image 1".
func TestPasteAClipboardImage(t *testing.T) {
	h := newHarness(t, 64e9)
	data, err := os.ReadFile(h.writePNG("clip.png", 300, 200))
	if err != nil {
		t.Fatal(err)
	}
	h.s.deps.ClipboardImage = func() []byte { return data }
	if !h.s.work.PasteImage(nil, false) {
		t.Fatal("the clipboard image was not taken")
	}
	if len(h.s.draft().Conditions) != 1 || h.s.draft().Conditions[0].Name != "pasted image 1" {
		t.Errorf("conditions %v", h.s.draft().Conditions)
	}
}

// Choosing a model file that cannot be read says so and keeps the current model; a real one
// drives the memory prediction from its own sizes at once.
func TestChoosingAModel(t *testing.T) {
	h := newHarness(t, 64e9)
	h.s.useModel(filepath.Join(h.dir, "missing.cmf"))
	if h.s.draft().Model != "" || !strings.Contains(h.s.message.Text, "missing.cmf") {
		t.Errorf("model %q, message %q", h.s.draft().Model, h.s.message.Text)
	}
	snap, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(h.dir, "tiny.cmf")
	if _, err := convert.Convert(context.Background(), snap, path, convert.Options{Profile: convert.ProfileF16}); err != nil {
		t.Fatal(err)
	}
	h.s.useModel(path)
	if h.s.draft().Model != path || h.s.deps.Geometry.Estimated || h.s.prediction.Weights > 100e6 {
		t.Errorf("model %q, geometry estimated %v, predicted weights %d", h.s.draft().Model, h.s.deps.Geometry.Estimated, h.s.prediction.Weights)
	}
}

// A file copied in the Finder is pasted as that file, not as the picture (its icon) the
// pasteboard would also offer.
func TestPasteAFinderFile(t *testing.T) {
	h := newHarness(t, 64e9)
	path := h.writePNG("from-finder.png", 120, 80)
	h.s.deps.ClipboardFile = func() string { return path }
	h.s.deps.ClipboardImage = func() []byte { t.Error("the picture was asked for before the file"); return nil }
	if !h.s.work.PasteImage(nil, true) {
		t.Fatal("the Finder file was not taken")
	}
	h.pump("the pasted file", func() bool { return len(h.s.draft().Conditions) == 1 })
	if h.s.draft().Conditions[0].Name != "from-finder.png" {
		t.Errorf("added %q", h.s.draft().Conditions[0].Name)
	}
}

// A model converted without its vision tower cannot take condition images: Generate says so and
// stays off until they are removed.
func TestNoVisionTowerRefusesConditionImages(t *testing.T) {
	h := newHarness(t, 64e9)
	g := h.s.deps.Geometry
	g.Weights = g.Weights[:0:0]
	for _, w := range h.s.deps.Geometry.Weights {
		if w.Name != "vis" {
			g.Weights = append(g.Weights, w)
		}
	}
	g.Estimated = false
	h.s.deps.Geometry = g
	h.s.work.Drop(fyne.Position{}, []fyne.URI{storage.NewFileURI(h.writePNG("ref.png", 64, 64))})
	h.pump("the image", func() bool { return len(h.s.draft().Conditions) == 1 })
	if !h.s.generateBtn.Disabled() || !strings.Contains(h.s.blocked.Text, "no vision tower") {
		t.Errorf("Generate enabled %v, reason %q", !h.s.generateBtn.Disabled(), h.s.blocked.Text)
	}
	h.s.work.RemoveCondition(0)
	if h.s.generateBtn.Disabled() || h.s.blocked.Visible() {
		t.Errorf("after removing the image Generate is still off: %q", h.s.blocked.Text)
	}
}

// With the Sharp preview setting the request asks for it; a real decode replaces the fast
// previews on the canvas until the final image, and the timing panel shows its cost as its own
// class.
func TestSharpPreviewInTheWindow(t *testing.T) {
	h := newHarness(t, 64e9)
	h.s.deps.Settings.Preview = settings.PreviewSharp
	test.Type(h.s.prompt.Text, "a harbour at noon")
	test.Tap(h.s.generateBtn)
	if req := <-h.gen.started; !req.SharpPreview {
		t.Fatal("the request does not ask for the sharp preview")
	}
	h.pump("job running", func() bool { return h.s.model.Current() == 1 })
	for range 3 {
		h.gen.step <- struct{}{}
	}
	h.pump("the sharp preview", func() bool { return strings.Contains(h.s.canvas.Caption.Text, "Sharp preview: step 2") })
	sharp := h.s.canvas.Current
	if got := h.s.timing.SharpText; !strings.Contains(got, "1 decodes at 1/4") || !strings.Contains(got, "every 2 steps") || !strings.Contains(got, "1.7 %") {
		t.Errorf("timing panel's sharp preview row %q", got)
	}
	h.gen.step <- struct{}{}
	h.pump("step 4", func() bool { return strings.Contains(h.s.progress.Stage.Text, "Step 4 of 4") })
	if h.s.canvas.Current != sharp {
		t.Error("a fast preview replaced the sharp one")
	}
	h.gen.release <- struct{}{}
	h.pump("the final image, saved", func() bool { return h.s.canvas.IsFinal && len(h.s.history.Entries) == 1 })
}

// Choosing the sharp preview in the settings re-predicts memory with its decodes in the
// denoiser's stage (a second VAE beside the denoiser), and choosing the fast one takes them out.
func TestSharpPreviewSettingJoinsThePrediction(t *testing.T) {
	h := newHarness(t, 64e9)
	denoiser := func() memplan.Stage {
		for _, st := range h.s.prediction.Stages {
			if st.Name == "denoiser" {
				return st
			}
		}
		t.Fatal("no denoiser stage in the prediction")
		return memplan.Stage{}
	}
	fast := denoiser()
	ns := h.s.deps.Settings
	ns.Preview = settings.PreviewSharp
	h.s.settingsSaved(ns)
	sharp := denoiser()
	if sharp.Weights <= fast.Weights || sharp.Working <= fast.Working {
		t.Errorf("denoiser stage with the sharp preview %+v, without %+v: want the VAE's weights and decode added", sharp, fast)
	}
	ns.Preview = settings.PreviewFast
	h.s.settingsSaved(ns)
	if got := denoiser(); got != fast {
		t.Errorf("back to the fast preview the denoiser stage is %+v, want %+v", got, fast)
	}
}
