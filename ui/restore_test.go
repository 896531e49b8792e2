package ui

import (
	"crypto/sha256"
	"encoding/hex"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/maskpaint"
)

// Restoring an image replaces the condition images with the ones it was made with: those in the
// list before go, the image's own are found beside it by name and content, and a missing one is
// named (broken item 3: the list kept the images already in it).
func TestRestoreReplacesTheConditionImages(t *testing.T) {
	h := newHarness(t, 64e9)
	s := h.s
	s.work.AddFiles([]string{h.writePNG("mine-1.png", 64, 48), h.writePNG("mine-2.png", 48, 64)})
	h.pump("the condition images", func() bool { return len(s.draft().Conditions) == 2 })

	// Made without condition images: the list empties.
	plain := &imagefile.Settings{Prompt: "a kite", Width: 512, Height: 512, Steps: 8, CFG: 1, Seed: 3}
	s.restore(history.Entry{Path: filepath.Join(h.dir, "plain.png"), Settings: plain})
	if n := len(s.draft().Conditions); n != 0 {
		t.Fatalf("after restoring an image made without condition images the list holds %d", n)
	}
	if d := s.jobDraft(); len(d.Conditions) != 0 {
		t.Fatalf("the restored recipe asks for %d condition images", len(d.Conditions))
	}

	// Made with one found beside it (and one that is not there): the list holds the found one.
	folder := t.TempDir()
	ref := h.writePNG("ref.png", 80, 60)
	data, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "ref.png"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	with := &imagefile.Settings{Prompt: "a kite over ref", Width: 512, Height: 512, Steps: 8, CFG: 1, Seed: 4,
		Images: []imagefile.ImageRef{{Name: "ref.png", SHA256: hex.EncodeToString(sum[:])}, {Name: "gone.png", SHA256: "00"}}}
	s.work.AddFiles([]string{h.writePNG("mine-3.png", 64, 48)})
	h.pump("another condition image", func() bool { return len(s.draft().Conditions) == 1 })
	s.restore(history.Entry{Path: filepath.Join(folder, "made.png"), Settings: with})
	if len(s.draft().Conditions) != 1 || s.draft().Conditions[0].Name != "ref.png" {
		t.Fatalf("after restoring an image made with ref.png the list holds %v", conditionNames(s))
	}
	if !strings.Contains(s.message.Text, "gone.png") {
		t.Errorf("the missing condition image is not named: %q", s.message.Text)
	}
	if got := s.conditions.Count.Text; !strings.HasPrefix(got, "1 of") {
		t.Errorf("the list's count says %q", got)
	}
}

func conditionNames(s *window) []string {
	var out []string
	for _, c := range s.draft().Conditions {
		out = append(out, c.Name)
	}
	return out
}

// savedEntry saves an image with settings in the window's history store and lists it.
func savedEntry(t *testing.T, h *harness, set *imagefile.Settings) history.Entry {
	t.Helper()
	e, err := h.s.deps.History.Save(image.NewNRGBA(image.Rect(0, 0, 32, 32)), set, h.s.now())
	if err != nil {
		t.Fatal(err)
	}
	h.s.history.AddSession(e)
	return e
}

// Use All replaces the whole recipe, Use Prompt and Use Seed only theirs; ⌘Z takes each back to
// the draft before it.
func TestRestoreWholePromptSeedAndUndo(t *testing.T) {
	h := newHarness(t, 64e9)
	s := h.s
	s.prompt.Text.SetText("my own prompt")
	s.options.Steps.SetText("12")
	s.model.SetRandomSeed(true)
	e := savedEntry(t, h, &imagefile.Settings{Prompt: "a fox in snow", NegativePrompt: "blur", Width: 768, Height: 768, Steps: 30, CFG: 4, Seed: 1234})

	s.usePrompt(e)
	if s.prompt.Text.Text != "a fox in snow" || s.draft().Steps != 12 || !s.draft().RandomSeed {
		t.Fatalf("Use Prompt: prompt %q, steps %d, random seed %v", s.prompt.Text.Text, s.draft().Steps, s.draft().RandomSeed)
	}
	s.undo()
	if s.prompt.Text.Text != "my own prompt" || s.draft().Prompt != "my own prompt" {
		t.Fatalf("⌘Z after Use Prompt: prompt %q", s.prompt.Text.Text)
	}

	s.useSeed(e)
	if s.draft().Seed != 1234 || s.draft().RandomSeed || s.options.SeedEntry.Text != "1234" || s.draft().Prompt != "my own prompt" || s.draft().Steps != 12 {
		t.Fatalf("Use Seed: seed %d (random %v, field %q), prompt %q, steps %d", s.draft().Seed, s.draft().RandomSeed, s.options.SeedEntry.Text, s.draft().Prompt, s.draft().Steps)
	}
	s.undo()
	if !s.draft().RandomSeed || s.options.SeedMode.Selected != "Random" {
		t.Fatalf("⌘Z after Use Seed: random %v, mode %q", s.draft().RandomSeed, s.options.SeedMode.Selected)
	}

	test.Tap(s.history.Thumbs()[0]) // a click is Use All
	if s.draft().Prompt != "a fox in snow" || s.draft().Steps != 30 || s.draft().CFG != 4 || s.draft().Seed != 1234 || s.options.SizeSelect.Selected != "768×768" {
		t.Fatalf("Use All: prompt %q steps %d cfg %g seed %d size %q", s.draft().Prompt, s.draft().Steps, s.draft().CFG, s.draft().Seed, s.options.SizeSelect.Selected)
	}
	s.undo()
	if s.draft().Prompt != "my own prompt" || s.draft().Steps != 12 || s.options.Steps.Text != "12" || !s.draft().RandomSeed {
		t.Fatalf("⌘Z after Use All: prompt %q steps %d (%q) random %v", s.draft().Prompt, s.draft().Steps, s.options.Steps.Text, s.draft().RandomSeed)
	}
	if s.model.Notice().Kind != noticeSuccess || !strings.Contains(s.message.Text, "Undone") {
		t.Errorf("after ⌘Z the notice is %q (kind %d)", s.message.Text, s.model.Notice().Kind)
	}
}

// Move to Trash takes a history image out of the list into the Trash; ⌘Z puts it back in both.
func TestGalleryTrashAndUndo(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	h := newHarness(t, 64e9)
	s := h.s
	s.deps.Desktop.GOOS = "linux"
	e := savedEntry(t, h, &imagefile.Settings{Prompt: "a lighthouse", Width: 512, Height: 512, Steps: 8, CFG: 1, Seed: 9})
	s.trashEntry(e)
	if _, err := os.Stat(e.Path); !os.IsNotExist(err) || len(s.history.Thumbs()) != 0 {
		t.Fatalf("after Move to Trash: file %v, %d thumbnails", err, len(s.history.Thumbs()))
	}
	trash, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_DATA_HOME"), "Trash", "files", "*.png"))
	if len(trash) != 1 {
		t.Fatalf("the Trash holds %v", trash)
	}
	s.undo()
	if _, err := os.Stat(e.Path); err != nil || len(s.history.Thumbs()) != 1 {
		t.Fatalf("after ⌘Z: file %v, %d thumbnails", err, len(s.history.Thumbs()))
	}
}

// Removing a start image with a painted mask is undone by ⌘Z: the image, its mask (with its
// strokes) and its extension come back; a stroke after a restore is undone before the restore.
func TestRemovingTheStartImageIsUndoable(t *testing.T) {
	h := newHarness(t, 64e9)
	s := h.s
	s.work.SetStart(mustCondition(t, h.writePNG("photo.png", 128, 128)))
	s.doc().Start.Mask.Begin()
	s.doc().Start.Mask.Stroke(maskpaint.Point{X: 20, Y: 20}, maskpaint.Point{X: 90, Y: 90}, 10, false)
	s.doc().Start.Mask.End()
	s.work.MaskChanged()
	s.work.ExtendSide(sideRight)
	covered := s.doc().Start.Mask.Coverage()
	s.work.RemoveStart()
	if s.doc().Start != nil {
		t.Fatal("the start image is still there")
	}
	s.undo()
	if s.doc().Start == nil || s.doc().Start.Image.Name != "photo.png" || s.doc().Start.Mask.Coverage() != covered || s.doc().Extend[sideRight] != extendStep || !s.canvas.Editing {
		t.Fatalf("after ⌘Z: start %v, extension %v, editing %v", s.doc().Start != nil, s.doc().Extend, s.canvas.Editing)
	}
	// The stroke is the latest edit again once the removal is undone: ⌘Z takes it back next.
	s.doc().Start.Mask.Begin()
	s.doc().Start.Mask.Stroke(maskpaint.Point{X: 100, Y: 10}, maskpaint.Point{X: 120, Y: 30}, 6, false)
	s.doc().Start.Mask.End()
	s.work.MaskChanged()
	s.undo()
	if s.doc().Start == nil || s.doc().Start.Mask.Coverage() != covered {
		t.Errorf("⌘Z after a stroke took back something else: start %v", s.doc().Start != nil)
	}
}

// Escape in the steps field (a text field with the focus) cancels the running job.
func TestEscapeFromATextFieldCancels(t *testing.T) {
	h := newHarness(t, 64e9)
	s := h.s
	test.Tap(s.generateBtn)
	<-h.gen.started
	h.pump("the job running", func() bool { return s.model.Current() != 0 })
	h.w.Canvas().Focus(s.options.Steps)
	s.options.Steps.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	h.pump("the job cancelled", func() bool { return s.model.Current() == 0 })
	if js := s.queue.Jobs(); len(js) != 1 || js[0].State.String() != "cancelled" {
		t.Errorf("the queue after Escape: %+v", js)
	}
}

// At launch the prompt has the focus: typing goes into it.
func TestPromptHasTheFocusAtLaunch(t *testing.T) {
	h := newHarness(t, 64e9)
	if f := h.w.Canvas().Focused(); f != h.s.prompt.Text {
		t.Fatalf("focused at launch: %T", f)
	}
	test.Type(h.w.Canvas().Focused(), "a heron")
	if h.s.draft().Prompt != "a heron" {
		t.Errorf("typing at launch made the prompt %q", h.s.draft().Prompt)
	}
}
