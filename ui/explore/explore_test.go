package explore

import (
	"errors"
	"image"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"easel/app/compose"
	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/memplan"
	"easel/app/settings"
	"easel/engine/pipeline"

	"easel/ui/gallery"
	"easel/ui/model"
)

// fakeShell records what the region asks of the window's shell.
type fakeShell struct {
	submitted []pipeline.Request
	labels    []string
	cancelled []jobs.ID
	saved     []*imagefile.Settings
	saveErr   error
	shown     int
	restored  []history.Entry
	varied    []compose.Draft
}

func newRegion(t *testing.T) (*Panel, *model.Window, *fakeShell) {
	t.Helper()
	a := test.NewApp()
	t.Cleanup(a.Quit)
	m := model.New(compose.NewDraft(settings.Settings{Width: 256, Height: 256, Steps: 2, CFG: 1}))
	m.SetRandomSeed(false)
	m.SetSeed(3)
	m.SetPrompt("a paper crane on a desk")
	f := &fakeShell{}
	w := a.NewWindow("explore")
	p := New(m, Shell{
		JobDraft: m.Draft,
		Predict: func(count int) (memplan.Prediction, error) {
			return memplan.Prediction{Peak: int64(count) << 30, Budget: 64 << 30}, nil
		},
		StepTime: func() time.Duration { return 0 },
		Submit: func(d compose.Draft, job compose.Job, req pipeline.Request, label string) (jobs.ID, error) {
			f.submitted, f.labels = append(f.submitted, req), append(f.labels, label)
			return jobs.ID(len(f.submitted)), nil
		},
		Cancel: func(id jobs.ID) { f.cancelled = append(f.cancelled, id) },
		Save: func(id jobs.ID, img *image.NRGBA, set *imagefile.Settings, done func(history.Entry, error)) {
			f.saved = append(f.saved, set)
			done(history.Entry{Path: "/out/" + strings.Repeat("c", len(f.saved)) + ".png", Settings: set}, f.saveErr)
		},
		Restore:    func(e history.Entry) { f.restored = append(f.restored, e) },
		Vary:       func(c *gallery.Cell, d compose.Draft, strength float64) { f.varied = append(f.varied, d) },
		SecondPass: func(*gallery.Cell, compose.Draft, float64) {},
		ShowGrid:   func() { f.shown++ },
		Queued:     func() {},
		Canvas:     w.Canvas,
		RandomSeed: func() uint64 { return 99 },
		Now:        func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
	})
	return p, m, f
}

// TestAxesSpeakTheMenusWords: the menus name the axes in words, never the command line's names,
// and every mistake is said in those words with what to do in the window (no flags, no
// "prompt-sr", no "grid axis").
func TestAxesSpeakTheMenusWords(t *testing.T) {
	p, m, _ := newRegion(t)
	for _, c := range p.Choices(0) {
		for _, cli := range []string{"prompt-sr", "cfg", "variation-strength", "hires"} {
			if c == cli {
				t.Errorf("the axis menu offers %q, the command line's name", c)
			}
		}
	}
	if !strings.Contains(strings.Join(p.Choices(0), "|"), "Prompt: replace words") {
		t.Errorf("the menu has no Prompt S/R in words: %q", p.Choices(0))
	}
	cases := []struct {
		name       string
		set        func()
		want       string
		startImage bool
	}{
		{"an axis twice", func() { p.SetAxis(0, "seed", "1-2"); p.SetAxis(1, "seed", "5") }, "Seed is already axis X", false},
		{"strength without a start image", func() { p.SetAxis(0, "strength", "0.5,0.7") }, "X (Strength) needs a start image: add one under Work on an image", false},
		{"words not in the prompt", func() { p.SetAxis(0, "prompt-sr", "owl,heron") }, `X (Prompt: replace words): "owl" is not in the prompt`, false},
		{"a bad value", func() { p.SetAxis(0, "steps", "two") }, `X (Steps): "two": write a whole number`, false},
		{"no values", func() { p.SetAxis(0, "cfg", "") }, "X (CFG scale): type its values", false},
		{"too many cells", func() { p.SetAxis(0, "seed", "1-10"); p.SetAxis(1, "steps", "1-10") }, "Y (Steps): 10 × 10 makes 100 cells", false},
	}
	for _, c := range cases {
		for i := range 3 {
			p.SetAxis(i, "", "")
		}
		c.set()
		info := p.Info()
		if !strings.Contains(info, c.want) || !p.Button().Disabled() {
			t.Errorf("%s: the section says %q (Explore off: %v); want %q", c.name, info, p.Button().Disabled(), c.want)
		}
		for _, cli := range []string{"prompt-sr", "grid axis", "--", "NAME=VALUES"} {
			if strings.Contains(info, cli) {
				t.Errorf("%s: the section says %q, with the command line's %q", c.name, info, cli)
			}
		}
	}
	// The prompt's own {a|b} takes an axis: with all three chosen it has none left.
	for i, n := range []string{"seed", "steps", "cfg"} {
		p.SetAxis(i, n, "1,2")
	}
	m.SetPrompt("a {crane|heron}")
	if !strings.Contains(p.Info(), "alternatives make an axis of their own") || strings.Contains(p.Info(), "--grid") {
		t.Errorf("three axes and {a|b}: %q", p.Info())
	}
}

// TestGridRunsAsOneJobAndSavesItsCells: two axes over one prefill make one job of 4 cells whose
// queue row names the grid, not a seed; each finished cell is saved under the grid's identity
// with its own seed and steps and drawn in the centre; the grid image is saved after them with
// its axes; a cell's menu restores and varies from the cell's own draft.
func TestGridRunsAsOneJobAndSavesItsCells(t *testing.T) {
	p, _, f := newRegion(t)
	p.SetAxis(0, "seed", "1-2")
	p.SetAxis(1, "steps", "2,3")
	if !strings.Contains(p.Info(), "4 cells (2 × 2 × 1) in 1 prefill(s)") || p.Button().Disabled() {
		t.Fatalf("before starting: %q", p.Info())
	}
	test.Tap(p.Button())
	if len(f.submitted) != 1 || len(f.submitted[0].Cells) != 4 || f.shown != 1 {
		t.Fatalf("%d jobs submitted (cells %d), the grid shown %d times", len(f.submitted), len(f.submitted[0].Cells), f.shown)
	}
	if l := f.labels[0]; l != "a paper crane on a desk · grid of 4" || strings.Contains(l, "seed") {
		t.Errorf("the queue row says %q", l)
	}
	if p.run.g.Titles != [3]string{"Seed", "Steps", ""} {
		t.Errorf("the grid image names its axes %q, not as the menus do", p.run.g.Titles)
	}
	req := f.submitted[0]
	j := jobs.Job{ID: 1, Request: req}
	for i, c := range req.Cells {
		img := image.NewNRGBA(image.Rect(0, 0, 32, 32))
		if !p.Event(j, pipeline.Event{Finished: &pipeline.Result{Index: i, Image: img, Width: 32, Height: 32, Seed: c.Seed, Steps: c.Steps}}) {
			t.Fatal("a grid job's event was not the grid's")
		}
	}
	if p.Event(jobs.Job{ID: 7}, pipeline.Event{}) {
		t.Error("another job's event was taken as the grid's")
	}
	if len(f.saved) != 5 || p.Sheet.Cells() != 4 || !p.Sheet.Box.Visible() {
		t.Fatalf("%d saved, %d cells drawn", len(f.saved), p.Sheet.Cells())
	}
	want := [][2]uint64{{1, 2}, {2, 2}, {1, 3}, {2, 3}}
	for i, set := range f.saved[:4] {
		if set.Batch == nil || set.Batch.ID != p.BatchID() || set.Batch.Count != 4 || set.Seed != want[i][0] || uint64(set.Steps) != want[i][1] {
			t.Errorf("cell %d saved as seed %d, %d steps, batch %+v", i+1, set.Seed, set.Steps, set.Batch)
		}
	}
	g := f.saved[4]
	if g.Grid == nil || g.Batch != nil || len(g.Grid.Axes) != 2 || g.Grid.Axes[0].Name != "seed" || len(g.Grid.Cells) != 4 || g.Grid.Cells[3] != "cccc.png" {
		t.Fatalf("the grid saved as %+v", g)
	}
	menu := p.Sheet.CellMenu(3)
	menu.Items[0].Action()
	menu.Items[1].Action()
	if len(f.restored) != 1 || f.restored[0].Settings.Seed != 2 || len(f.varied) != 1 || f.varied[0].Seed != 2 || f.varied[0].Steps != 3 {
		t.Errorf("the fourth cell's menu restored %+v and varied %+v", f.restored, f.varied)
	}
	shown, l := p.Sheet.Image()
	p.Sheet.Resize(fyne.NewSize(float32(shown.Rect.Dx()), float32(shown.Rect.Dy())))
	if r := l.CellRect(1, 0); p.Sheet.CellAt(fyne.NewPos(float32(r.Min.X+4), float32(r.Min.Y+4))) != 1 {
		t.Error("a tap on the second cell does not find it")
	}
}

// TestStoppedGridKeepsItsCells: a grid of two prefills (two sizes) whose first job fails cancels
// the other and saves the grid with the one cell made; a cell that could not be saved is not in
// the grid's list.
func TestStoppedGridKeepsItsCells(t *testing.T) {
	p, _, f := newRegion(t)
	p.SetAxis(0, "size", "256x256,320x256")
	test.Tap(p.Button())
	if len(f.submitted) != 2 {
		t.Fatalf("two sizes made %d jobs", len(f.submitted))
	}
	for _, l := range f.labels {
		if l != "a paper crane on a desk · 1 of a grid of 2" {
			t.Errorf("a row of the grid of two jobs says %q", l)
		}
	}
	first := jobs.Job{ID: 1, Request: f.submitted[0]}
	p.Event(first, pipeline.Event{Finished: &pipeline.Result{Index: 0, Image: image.NewNRGBA(image.Rect(0, 0, 32, 32)), Width: 32, Height: 32}})
	p.Stopped(first)
	p.Stopped(first) // told again (failed, then ended): nothing more
	if len(f.cancelled) != 1 || f.cancelled[0] != 2 {
		t.Errorf("the other job cancelled: %v", f.cancelled)
	}
	if len(f.saved) != 2 || f.saved[1].Grid == nil || f.saved[1].Grid.Cells[0] == "" || f.saved[1].Grid.Cells[1] != "" {
		t.Fatalf("after the stop: %d saved, the grid %+v", len(f.saved), f.saved[len(f.saved)-1].Grid)
	}

	// A new grid whose cell could not be saved: nothing of it is listed, the grid waits.
	f.saved, f.saveErr = nil, errors.New("disk full")
	test.Tap(p.Button())
	next := jobs.Job{ID: 3, Request: f.submitted[2]}
	p.Event(next, pipeline.Event{Finished: &pipeline.Result{Index: 0, Image: image.NewNRGBA(image.Rect(0, 0, 32, 32)), Width: 32, Height: 32}})
	if len(f.saved) != 1 {
		t.Errorf("an unsaved cell led to %d saves", len(f.saved))
	}
}
