package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"easel/app/jobs"
	"easel/app/settings"
	"easel/app/unfinished"
	"easel/engine/convert"
	"easel/internal/tinymodel"
)

// The prompt and the everyday settings outlive the window: a new window on the same draft store
// opens with them.
func TestDraftPersistsAcrossANewWindow(t *testing.T) {
	store := &settings.DraftStore{Path: filepath.Join(t.TempDir(), "draft.json")}
	h := newHarnessWith(t, 64e9, func(h *harness, d *Deps) { d.DraftStore = store })
	s := h.s
	s.prompt.Text.SetText("a tram in the rain, night")
	s.options.SizeSelect.SetSelected("768×768")
	s.options.Steps.SetText("22")
	s.options.Count.SetText("3")
	s.options.CFG.SetValue(3.5)
	s.options.SeedMode.SetSelected("Fixed")
	s.options.SeedEntry.SetText("4242")
	h.closeWindow()

	again := newHarnessWith(t, 64e9, func(h *harness, d *Deps) { d.DraftStore = store })
	d := again.s.draft()
	if d.Prompt != "a tram in the rain, night" || d.CustomW != 768 || d.CustomH != 768 || d.Steps != 22 || d.Count != 3 || d.CFG != 3.5 || d.RandomSeed || d.Seed != 4242 {
		t.Fatalf("the new window's draft: %+v", d)
	}
	o := again.s.options
	if again.s.prompt.Text.Text != d.Prompt || o.SizeSelect.Selected != "768×768" || o.Steps.Text != "22" || o.Count.Text != "3" || o.SeedEntry.Text != "4242" {
		t.Errorf("the new window shows prompt %q, size %q, steps %q, images %q, seed %q",
			again.s.prompt.Text.Text, o.SizeSelect.Selected, o.Steps.Text, o.Count.Text, o.SeedEntry.Text)
	}
}

// Closing the window while a job runs asks first: Keep working leaves the job running; Discard and
// quit closes the window and cancels it. Without jobs it closes at once.
func TestClosingWithJobsAsks(t *testing.T) {
	h := newHarness(t, 64e9)
	s := h.s
	test.Tap(s.generateBtn)
	<-h.gen.started
	s.askClose()
	if s.closeDialog == nil || h.closed {
		t.Fatal("closing with a running job asked nothing")
	}
	markup := test.RenderObjectToMarkup(h.w.Canvas().Overlays().Top())
	for _, want := range []string{"A job is running", "Discard and quit", "Keep working", "kept for next time"} {
		if !strings.Contains(markup, want) {
			t.Errorf("the question lacks %q", want)
		}
	}
	test.Tap(findButton(t, h.w.Canvas().Overlays().Top(), "Keep working"))
	if s.queue.Pending() != 1 {
		t.Fatalf("Keep working: %d jobs pending", s.queue.Pending())
	}
	s.askClose()
	test.Tap(findButton(t, h.w.Canvas().Overlays().Top(), "Discard and quit"))
	h.closed = true // the window closed itself
	if js := s.queue.Jobs(); len(js) != 1 || js[0].State != jobs.Cancelled {
		t.Errorf("after Discard and quit the job is %v", js)
	}
}

// With jobs kept across a quit, closing with jobs running or queued offers Finish later first:
// the window closes and the next one offers to resume them. Discard and quit removes what was
// kept of them (their folders and checkpoints), so the next window offers nothing.
func TestClosingWithJobsOffersFinishLater(t *testing.T) {
	if testing.Short() {
		t.Skip("fingerprints the tiny model")
	}
	model := tinymodel.Path(t, convert.Options{Profile: convert.ProfileF16})
	support := t.TempDir()
	open := func() *harness {
		store, err := unfinished.Open(support)
		if err != nil {
			t.Fatal(err)
		}
		return newHarnessWith(t, 64e9, func(h *harness, d *Deps) { d.Unfinished, d.Settings.Model = store, model })
	}
	queueTwo := func(h *harness) {
		h.s.prompt.Text.SetText("a paper crane")
		test.Tap(h.s.generateBtn)
		<-h.gen.started
		test.Tap(h.s.generateBtn)
		if n := h.s.queue.Pending(); n != 2 {
			t.Fatalf("%d jobs pending, want one running and one queued", n)
		}
	}

	h := open()
	queueTwo(h)
	h.s.askClose()
	top := h.w.Canvas().Overlays().Top()
	markup := test.RenderObjectToMarkup(top)
	for _, want := range []string{"2 jobs are running or queued", "the next launch offers to resume them", "Finish later", "Discard and quit", "Keep working"} {
		if !strings.Contains(markup, want) {
			t.Errorf("the question lacks %q", want)
		}
	}
	if strings.Index(markup, "Finish later") > strings.Index(markup, "Discard and quit") {
		t.Error("Finish later is not the first choice")
	}
	test.Tap(findButton(t, top, "Finish later"))
	h.closed = true // the window closed itself

	h = open()
	if h.s.keeping.Offer() == nil || h.s.keeping.Offer().ResumeAll.Text != "Resume 2 unfinished jobs" {
		t.Fatalf("after Finish later the next window offers %v", h.s.keeping.Offer().ResumeAll)
	}
	h.s.keeping.Offer().Dialog.Hide() // neither resumed nor discarded: they stay kept
	h.closeWindow()

	h = open()
	h.s.keeping.Offer().Dialog.Hide()
	queueTwo(h)
	h.s.askClose()
	test.Tap(findButton(t, h.w.Canvas().Overlays().Top(), "Discard and quit"))
	h.closed = true
	store, _ := unfinished.Open(support)
	left, err := store.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 2 {
		t.Errorf("Discard and quit left %d kept jobs; want the earlier window's 2 only", len(left))
	}
	for _, p := range left {
		if p.Checkpoint != nil {
			t.Errorf("%s has a checkpoint; the earlier window's jobs never ran a step", p.Label)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(support, "unfinished"))
	if len(entries) != 2 {
		t.Errorf("the kept folders after Discard and quit: %d, want the earlier 2", len(entries))
	}
}

// Quit in the menu (⌘Q) is the same close.
func TestQuitMenuItemCloses(t *testing.T) {
	h := newHarness(t, 64e9)
	var quit bool
	for _, m := range h.w.MainMenu().Items {
		for _, it := range m.Items {
			if it.IsQuit {
				quit = true
			}
		}
	}
	if !quit {
		t.Error("the menu has no Quit that closes as the window does")
	}
}

// While jobs render on another machine the window says so under the canvas, before any job
// starts; back on this machine the line goes.
func TestRenderOnIndicator(t *testing.T) {
	h := newHarnessWith(t, 64e9, func(h *harness, d *Deps) { d.Settings.RenderOn = "192.0.2.7:7860" })
	if !h.s.network.Visible() || !strings.Contains(h.s.network.Text, "Rendering on 192.0.2.7:7860") {
		t.Fatalf("the indicator: visible %v, %q", h.s.network.Visible(), h.s.network.Text)
	}
	ns := h.s.deps.Settings
	ns.RenderOn = ""
	h.s.applyNetwork(ns)
	if h.s.network.Visible() {
		t.Errorf("rendering here, the indicator still says %q", h.s.network.Text)
	}
}
