package ui

import (
	"easel/ui/recipe"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"easel/app/grid"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/memplan"
	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/engine/ml/cpu"
	"easel/engine/pipeline"
	"easel/engine/pipeline/pipelinetest"
	"easel/internal/tinymodel"

	"easel/ui/canvasarea"
)

// TestExploreBuildsAGrid drives the Explore section on the real tiny model: two axes typed with
// the range syntax give the cell count and prefill count before starting, a bad axis turns
// Explore off with its sentence; Explore makes one job for the one prefill, the grid fills as
// the 4 cells finish, each cell saved with its own seed and steps under one grid identity, then
// the labelled grid itself with its axes; a tap on a cell opens its menu and Restore brings its
// settings back.
func TestExploreBuildsAGrid(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	model := tinymodel.Path(t, convert.Options{Profile: convert.ProfileF16})
	gen := &jobs.ModelGenerator{Path: model}
	t.Cleanup(func() { gen.Close() })
	h := newHarnessWith(t, 64e9, func(h *harness, d *Deps) {
		d.Generator = gen
		d.Settings.Model = model
		g, err := memplan.GeometryOf(model)
		if err != nil {
			t.Fatal(err)
		}
		d.Geometry = g
	})
	h.patience = 5 * time.Minute
	s, p := h.s, h.s.explore
	h.s.options.SizeSelect.SetSelected(recipe.SizeCustomLabel)
	h.s.options.CustomW.SetText("256")
	h.s.options.CustomH.SetText("256")
	h.s.options.Steps.SetText("2")
	s.model.SetRandomSeed(false)
	s.model.SetSeed(3)
	test.Type(s.prompt.Text, "a paper crane")

	p.SetAxis(0, "seed", "1-2")
	p.SetAxis(1, "seed", "5")
	if !strings.Contains(p.Info(), "Seed is already axis X") || !p.Button().Disabled() {
		t.Fatalf("a seed axis twice: %q (Explore disabled: %v)", p.Info(), p.Button().Disabled())
	}
	p.SetAxis(1, "steps", "2,3")
	if !strings.Contains(p.Info(), "4 cells (2 × 2 × 1) in 1 prefill(s)") || !strings.Contains(p.Info(), "Peak memory about") || p.Button().Disabled() {
		t.Fatalf("before starting: %q", p.Info())
	}
	test.Tap(p.Button())
	h.pump("the grid's 4 cells and the grid saved", func() bool { return len(s.history.Entries) == 5 })
	if len(p.Jobs()) != 1 || p.Sheet.Cells() != 4 || !p.Sheet.Box.Visible() {
		t.Fatalf("%d jobs, %d cells shown", len(p.Jobs()), p.Sheet.Cells())
	}
	if l := s.queue.Jobs()[0].Label; l != "a paper crane · grid of 4" {
		t.Errorf("the grid's queue row says %q (each cell has its own seed)", l)
	}
	// The grid is in view in the centre of a 1280×800 window, at the region's size, without
	// unfolding anything.
	h.w.Resize(screen1280)
	relayout(h.w.Content())
	if s.area.Shown() != canvasarea.Grid || !s.area.Visible(canvasarea.Grid) || s.area.Visible(canvasarea.Canvas) {
		t.Fatalf("after Explore the centre shows view %d", s.area.Shown())
	}
	if sz := p.Sheet.Size(); sz.Width < 400 || sz.Height < 300 {
		t.Errorf("the grid is drawn %v in the centre; want it at the region's size", sz)
	}
	var grid *imagefile.Settings
	cells := map[int]*imagefile.Settings{}
	for _, e := range s.history.Entries {
		switch {
		case e.Settings == nil:
			t.Fatalf("%s has no settings", e.Path)
		case e.Settings.Grid != nil:
			grid = e.Settings
			// Named as a grid, not as a cell, and its menu has no Vary or Refine (it is no one image).
			if !strings.HasSuffix(e.Path, "-grid.png") {
				t.Errorf("the grid image is named %s", filepath.Base(e.Path))
			}
			for _, it := range s.actions.Menu(e).Items {
				if it.Label == "Vary" || it.Label == "Refine this" {
					t.Errorf("the grid image's menu offers %s", it.Label)
				}
			}
		case e.Settings.Batch != nil && e.Settings.Batch.ID == p.BatchID() && e.Settings.Batch.Count == 4:
			cells[e.Settings.Batch.Index] = e.Settings
		}
	}
	want := []struct {
		seed  uint64
		steps int
	}{{1, 2}, {2, 2}, {1, 3}, {2, 3}}
	for i, w := range want {
		if c := cells[i]; c == nil || c.Seed != w.seed || c.Steps != w.steps {
			t.Errorf("cell %d saved as %+v, want seed %d, %d steps", i+1, c, w.seed, w.steps)
		}
	}
	if grid == nil || len(grid.Grid.Axes) != 2 || grid.Grid.Axes[1].Name != "steps" || len(grid.Grid.Cells) != 4 {
		t.Fatalf("the grid image's settings %+v", grid)
	}
	shown, l := p.Sheet.Image()
	if shown.Rect.Dx() != l.Width || l.CellW != 256 {
		t.Errorf("the sheet shows %v with cells %d wide", shown.Rect, l.CellW)
	}
	// The fourth cell (seed 2, steps 3), tapped where it is drawn, opens its menu; Restore.
	p.Sheet.Resize(fyne.NewSize(float32(l.Width), float32(l.Height)))
	r := l.CellRect(1, 1)
	if got := p.Sheet.CellAt(fyne.NewPos(float32(r.Min.X+10), float32(r.Min.Y+10))); got != 3 {
		t.Fatalf("a tap on the fourth cell finds cell %d", got+1)
	}
	menu := p.Sheet.CellMenu(3)
	if len(menu.Items) != 4 {
		t.Fatalf("the cell menu has %d items", len(menu.Items))
	}
	menu.Items[0].Action()
	if s.draft().Seed != 2 || s.draft().Steps != 3 {
		t.Errorf("restored seed %d, %d steps; want 2 and 3", s.draft().Seed, s.draft().Steps)
	}
	// With EASEL_SCREENSHOTS=docs/screenshots: the window at 1440×900 on the real theme, the
	// recipe column scrolled to the Explore section with its grid, for the README.
	if dir := os.Getenv("EASEL_SCREENSHOTS"); dir != "" {
		fyne.CurrentApp().Settings().SetTheme(theme.DefaultTheme())
		s.sections.Open(sectionExplore)
		h.w.Resize(fyne.NewSize(1439, 899))
		h.w.Canvas().Capture()
		h.w.Resize(screen1440)
		relayout(h.w.Content())
		scroll := firstScroll(h.w.Content().(*fyne.Container).Objects[0])
		d := fyne.CurrentApp().Driver()
		y := d.AbsolutePositionForObject(p.Box).Y - d.AbsolutePositionForObject(scroll.Content).Y
		scroll.ScrollToOffset(fyne.NewPos(0, y-8))
		f, err := os.Create(filepath.Join(dir, "window-explore.png"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := png.Encode(f, h.w.Canvas().Capture()); err != nil {
			t.Fatal(err)
		}
	}
}

// firstScroll is the first scroll under o (depth first), or nil.
func firstScroll(o fyne.CanvasObject) *container.Scroll {
	if sc, ok := o.(*container.Scroll); ok {
		return sc
	}
	kids, _ := children(o)
	for _, k := range kids {
		if sc := firstScroll(k); sc != nil {
			return sc
		}
	}
	return nil
}

// TestExploreCancelKeepsFinishedCells: cancelling a grid part-way (at the first step of its
// third cell, from the denoiser's own goroutine) keeps the two finished cells in History and
// saves the partial grid, its missing cells drawn as placeholders and left out of its list.
func TestExploreCancelKeepsFinishedCells(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	f, err := cmf.Open(tinymodel.Path(t, convert.Options{Profile: convert.ProfileF16}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	ids := make(chan jobs.ID, 1)
	var h *harness
	watch := &pipelinetest.Watch{BeforeStep: func(n int) {
		if n == 5 { // 2 steps a cell, no CFG: the third cell's first step
			h.s.queue.Cancel(<-ids)
		}
	}}
	p, err := pipeline.New(f, cpu.New(), pipelinetest.WatchDenoiser(pipeline.Options{}, watch))
	if err != nil {
		t.Fatal(err)
	}
	h = newHarnessWith(t, 64e9, func(h *harness, d *Deps) {
		d.Generator = p
		g, err := memplan.GeometryOf(f.Path())
		if err != nil {
			t.Fatal(err)
		}
		d.Geometry = g
	})
	h.patience = 5 * time.Minute
	s, e := h.s, h.s.explore
	s.options.SizeSelect.SetSelected(recipe.SizeCustomLabel)
	s.options.CustomW.SetText("256")
	s.options.CustomH.SetText("256")
	s.options.Steps.SetText("2")
	s.model.SetRandomSeed(false)
	test.Type(s.prompt.Text, "a paper crane")
	e.SetAxis(0, "seed", "1-4")
	test.Tap(e.Button())
	for _, id := range e.Jobs() {
		ids <- id
	}
	h.pump("the two finished cells and the partial grid saved", func() bool { return len(s.history.Entries) == 3 })
	var partial *imagefile.Settings
	for _, en := range s.history.Entries {
		if en.Settings != nil && en.Settings.Grid != nil {
			partial = en.Settings
		}
	}
	if partial == nil || len(partial.Grid.Cells) != 4 || partial.Grid.Cells[0] == "" || partial.Grid.Cells[1] == "" || partial.Grid.Cells[2] != "" || partial.Grid.Cells[3] != "" {
		t.Fatalf("the partial grid: %+v", partial)
	}
	shown, l := e.Sheet.Image()
	r := l.CellRect(3, 0)
	if shown.NRGBAAt(r.Min.X+5, r.Min.Y+5) != grid.Placeholder {
		t.Error("the unfinished fourth cell is not a placeholder")
	}
}
