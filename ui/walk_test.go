package ui

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"

	"easel/app/compose"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/maskpaint"
	"easel/app/settings"
	"easel/app/unfinished"
)

// A picture pasted while the prompt has the focus (as it has at launch) is the start image, with
// a notice that says so and how to take it back; ⌘Z takes it back; no condition image is added.
func TestPastedPictureIsTheStartImage(t *testing.T) {
	var data []byte
	h := newHarnessWith(t, 64e9, func(h *harness, d *Deps) {
		d.ClipboardImage = func() []byte { return data }
	})
	b, err := os.ReadFile(h.writePNG("clip.png", 96, 64))
	if err != nil {
		t.Fatal(err)
	}
	data = b
	h.w.Canvas().Focus(h.s.prompt.Text)
	h.s.prompt.Text.TypedShortcut(&fyne.ShortcutPaste{Clipboard: &memClipboard{}})
	st := h.s.doc().Start
	if st == nil || st.Image.Image.Rect.Dx() != 96 || len(h.s.draft().Conditions) != 0 {
		t.Fatalf("after the paste: start %v, %d condition images", st != nil, len(h.s.draft().Conditions))
	}
	if n := h.s.model.Notice(); n.Kind != noticeSuccess || !strings.Contains(n.Text, "is the start image") || !strings.Contains(n.Text, undoKeyName()) {
		t.Errorf("the paste's notice: %+v", n)
	}
	if h.s.prompt.Text.Text != "" {
		t.Errorf("the paste typed %q into the prompt", h.s.prompt.Text.Text)
	}
	h.s.undo()
	if h.s.doc().Start != nil {
		t.Error("⌘Z left the pasted start image")
	}
	// Text in the clipboard that names no file is pasted into the prompt as text.
	data = nil
	h.s.prompt.Text.TypedShortcut(&fyne.ShortcutPaste{Clipboard: &memClipboard{text: "a quiet harbour"}})
	if h.s.prompt.Text.Text != "a quiet harbour" {
		t.Errorf("a text paste put %q in the prompt", h.s.prompt.Text.Text)
	}
}

// Esc closes the question what a dropped Easel PNG is for, changing nothing; asked again, "Use as
// start image" makes the picture the start image.
func TestRestoreQuestionEscAndStartImage(t *testing.T) {
	h := newHarness(t, 64e9)
	ours := filepath.Join(h.dir, "made.png")
	set := &imagefile.Settings{Prompt: "an owl", Width: 1024, Height: 1024, Steps: 12, CFG: 3, Seed: 99, Sampler: "Euler"}
	img := mustCondition(t, h.writePNG("pixels.png", 80, 48)).Image
	if err := imagefile.WriteFile(ours, img, set); err != nil {
		t.Fatal(err)
	}
	h.s.prompt.Text.SetText("my prompt")
	asked := h.s.work.RestoreQuestion()
	h.s.work.Drop(fyne.Position{}, []fyne.URI{storage.NewFileURI(ours)})
	h.pump("the restore question", func() bool { return h.s.work.RestoreQuestion() != asked })
	h.s.escapeKey()
	if h.w.Canvas().Overlays().Top() != nil {
		t.Fatal("Esc left the restore question open")
	}
	if h.s.draft().Prompt != "my prompt" || len(h.s.draft().Conditions) != 0 || h.s.doc().Start != nil {
		t.Errorf("after Esc: prompt %q, %d condition images, start %v", h.s.draft().Prompt, len(h.s.draft().Conditions), h.s.doc().Start != nil)
	}
	h.s.work.Drop(fyne.Position{}, []fyne.URI{storage.NewFileURI(ours)})
	h.answerRestore("Use as start image")
	h.pump("the start image", func() bool { return h.s.doc().Start != nil })
	if st := h.s.doc().Start; st.Image.Name != "made.png" || st.Image.Image.Rect.Dx() != 80 || h.s.draft().Prompt != "my prompt" {
		t.Errorf("used as the start image: %q %d wide, prompt %q", st.Image.Name, st.Image.Image.Rect.Dx(), h.s.draft().Prompt)
	}
}

// Tab leaves the prompt for the next field instead of typing a tab character.
func TestTabLeavesThePrompt(t *testing.T) {
	h := newHarness(t, 64e9)
	c := h.w.Canvas()
	c.Focus(h.s.prompt.Text)
	if h.s.prompt.Text.AcceptsTab() {
		t.Fatal("the prompt takes Tab")
	}
	c.FocusNext()
	if c.Focused() == h.s.prompt.Text || c.Focused() == nil {
		t.Errorf("focus after Tab: %T", c.Focused())
	}
}

// Ctrl+Q (the Quit item's key) asks first while a job runs, and Esc answers "Keep working".
func TestQuitAsksWhileJobsRun(t *testing.T) {
	h := newHarness(t, 64e9)
	h.s.generate()
	<-h.gen.started
	h.pump("running", func() bool { return h.s.model.Current() != 0 })
	menuAction(t, h.w, quitShortcut)()
	if h.s.closeDialog == nil || h.w.Canvas().Overlays().Top() == nil {
		t.Fatal("Ctrl+Q with a job running did not ask")
	}
	h.s.escapeKey()
	if h.w.Canvas().Overlays().Top() != nil || h.s.closeAsked || h.s.queue.Pending() != 1 {
		t.Errorf("after Esc: question open %v, quitting %v, %d jobs", h.w.Canvas().Overlays().Top() != nil, h.s.closeAsked, h.s.queue.Pending())
	}
	h.s.cancelCurrent()
}

// The resume offer lists each kept job once, with its prompt, seed, size, where it was rendering
// and where it stopped; discarding one row leaves the others kept and offered.
func TestResumeOfferRowPerJob(t *testing.T) {
	store, err := unfinished.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range []struct{ prompt, where string }{{"a lighthouse", ""}, {"a fox in snow", "mini.local:7860"}, {"a red door", ""}} {
		d := compose.NewDraft(settings.Defaults())
		d.Prompt = p.prompt
		if _, err := store.Add(d, uint64(i+1), jobLabel(p.prompt, uint64(i+1)), p.where); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarnessWith(t, 64e9, func(h *harness, d *Deps) { d.Unfinished = store })
	rows := offerRowTexts(h.s.keeping.Offer().Rows)
	want := []string{
		"a lighthouse | seed 1 · 1024×1024 · " + thisMachine() + " · waiting",
		"a fox in snow | seed 2 · 1024×1024 · mini.local:7860 · waiting",
		"a red door | seed 3 · 1024×1024 · " + thisMachine() + " · waiting",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the offer's rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	test.Tap(findButton(t, h.s.keeping.Offer().Rows.Objects[1], "Discard"))
	left, err := store.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 2 || left[0].Draft.Prompt != "a lighthouse" || left[1].Draft.Prompt != "a red door" {
		t.Errorf("kept after discarding the second: %d", len(left))
	}
	if n := len(h.s.keeping.Offer().Rows.Objects); n != 2 || h.s.keeping.Offer().ResumeAll.Text != "Resume 2 unfinished jobs" {
		t.Errorf("after discarding one: %d rows, %q", n, h.s.keeping.Offer().ResumeAll.Text)
	}
	h.s.escapeKey() // Later: the two stay kept
	if left, _ := store.List(); len(left) != 2 || h.w.Canvas().Overlays().Top() != nil {
		t.Errorf("after Esc: %d kept, offer open %v", len(left), h.w.Canvas().Overlays().Top() != nil)
	}
}

// A job sent to another machine that cannot be reached fails in plain words and is failed, not
// unfinished: nothing of it is kept for the next launch.
func TestFailedRemoteJobIsNotKept(t *testing.T) {
	model := tinyModelPath(t)
	store, err := unfinished.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	h := newHarnessWith(t, 64e9, func(h *harness, d *Deps) {
		d.Settings.Model, d.Settings.RenderOn, d.Unfinished = model, closed, store
	})
	h.s.prompt.Text.SetText("a lantern")
	h.s.generate()
	h.pump("the job to fail", func() bool {
		js := h.s.queue.Jobs()
		return len(js) == 1 && js[0].State == jobs.Failed
	})
	h.pump("the failure said", func() bool { return strings.Contains(h.s.message.Text, "is not answering") })
	if strings.Contains(h.s.message.Text, "dial tcp") || strings.Contains(h.s.message.Text, "Post \"") {
		t.Errorf("the notice shows Go's text: %q", h.s.message.Text)
	}
	h.pump("the failed job let go", func() bool {
		left, _ := store.List()
		return len(left) == 0
	})
}

// The canvas document — the start image, its mask, the extension and the strength — is kept
// across a relaunch with the draft, so the next Generate starts from the same picture.
func TestCanvasKeptAcrossRelaunch(t *testing.T) {
	drafts := &settings.DraftStore{Path: filepath.Join(t.TempDir(), "draft.json")}
	open := func() *harness {
		return newHarnessWith(t, 64e9, func(h *harness, d *Deps) { d.DraftStore = drafts })
	}
	h := open()
	h.s.work.SetStart(mustCondition(t, h.writePNG("street.png", 256, 192)))
	m := h.s.doc().Start.Mask
	m.Begin()
	m.Stroke(maskpaint.Point{X: 60, Y: 60}, maskpaint.Point{X: 180, Y: 120}, 24, false)
	m.End()
	h.s.work.MaskChanged()
	h.s.work.ExtendSide(sideRight)
	h.s.model.SetStrength(0.75)
	want := h.s.doc()
	wantMask := append([]byte(nil), want.Start.Mask.Image().Pix...)
	h.closeWindow()

	h2 := open()
	got := h2.s.doc()
	if got.Start == nil {
		t.Fatalf("the start image is not back after a relaunch (%v)", h2.s.resumeErr)
	}
	if got.Start.Image.Name != "street.png" || string(got.Start.Image.Image.Pix) != string(want.Start.Image.Image.Pix) ||
		string(got.Start.Mask.Image().Pix) != string(wantMask) || got.Extend != want.Extend || got.Strength != 0.75 {
		t.Errorf("after a relaunch: %q, extend %v, strength %g (the pixels or mask may differ)", got.Start.Image.Name, got.Extend, got.Strength)
	}
	if d := h2.s.jobDraft(); d.Start == nil || d.Start.Mask == nil || d.Start.Extend.Right != extendStep {
		t.Errorf("the next Generate after a relaunch is not from the start image: %+v", d.Start)
	}
	if !h2.s.canvas.Editing {
		t.Error("the resumed start image is not on the canvas")
	}
	// Back to text to image: the next launch starts without it.
	h2.s.work.RemoveStart()
	h2.closeWindow()
	if h3 := open(); h3.s.doc().Start != nil {
		t.Error("a removed start image came back")
	}
}

// The mouse wheel over a text field scrolls the recipe column, as it does elsewhere in it.
func TestWheelOverAFieldScrollsTheColumn(t *testing.T) {
	h := newHarness(t, 64e9)
	openEverySection(h.s) // a column taller than the window
	h.w.Resize(screen1280)
	relayout(h.w.Content())
	d := fyne.CurrentApp().Driver()
	over := d.AbsolutePositionForObject(h.s.prompt.Negative).AddXY(10, 10)
	before := h.s.column.Offset.Y
	test.Scroll(h.w.Canvas(), over, 0, -120)
	if h.s.column.Offset.Y <= before {
		t.Errorf("the wheel over the negative prompt left the column at %v (was %v)", h.s.column.Offset.Y, before)
	}
}

// Esc closes the Settings dialog as its Cancel does (every dialog goes through the window's
// stack of questions).
func TestEscClosesSettings(t *testing.T) {
	h := newHarnessWith(t, 64e9, func(h *harness, d *Deps) {
		d.Store = &settings.Store{Path: filepath.Join(h.dir, "settings.json")}
	})
	h.s.showSettings()
	if h.w.Canvas().Overlays().Top() == nil {
		t.Fatal("Settings did not open")
	}
	h.s.escapeKey()
	if h.w.Canvas().Overlays().Top() != nil {
		t.Error("Esc left Settings open")
	}
}
