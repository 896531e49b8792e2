package ui

import (
	"image"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"easel/app/grid"
	"easel/app/history"

	"easel/ui/gallery"
)

// exploreSheet shows the grid being made: the labelled grid image (app/grid draws it, with
// placeholders for the cells to come), redrawn as each cell finishes. A tap on a cell opens its
// menu: restore its settings, vary, refine or upscale it.
type exploreSheet struct {
	widget.BaseWidget
	s      *window
	run    *exploration
	z      int // the Z value shown
	img    *canvas.Image
	layout grid.Layout
	shown  *image.NRGBA
	box    *fyne.Container
}

func newExploreSheet(s *window) *exploreSheet {
	e := &exploreSheet{s: s, img: canvas.NewImageFromImage(nil)}
	e.img.FillMode = canvas.ImageFillContain
	e.img.ScaleMode = canvas.ImageScaleFastest
	e.ExtendBaseWidget(e)
	e.box = container.NewStack(e) // the grid fills the centre
	e.box.Hide()
	return e
}

// CreateRenderer draws the grid image.
func (e *exploreSheet) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(e.img) }

// MinSize is small: the grid fills the centre (drawn to fit), whatever the window's size.
func (e *exploreSheet) MinSize() fyne.Size {
	if e.shown == nil {
		return fyne.NewSize(0, 0)
	}
	return fyne.NewSize(160, 160)
}

// begin shows a new grid, every cell still to come.
func (e *exploreSheet) begin(run *exploration) {
	e.run, e.z = run, 0
	e.show()
}

// show redraws the grid from the cells finished so far (the Z value of the latest one).
func (e *exploreSheet) show() {
	run := e.run
	if run == nil {
		return
	}
	latest := -1
	for i := range run.pictures {
		latest = max(latest, i)
	}
	if latest >= 0 {
		e.z = latest / run.g.PerGrid()
	}
	img, l, err := run.g.Compose(e.z, run.pictures)
	if err != nil {
		e.s.say("The grid could not be drawn: %v", err)
		return
	}
	e.shown, e.layout = img, l
	e.img.Image = img
	e.img.Refresh()
	e.box.Show()
	e.Refresh()
}

// cellAt is the grid index of the cell under pos (a position in the widget), or -1.
func (e *exploreSheet) cellAt(pos fyne.Position) int {
	if e.shown == nil || e.Size().Width <= 0 || e.Size().Height <= 0 {
		return -1
	}
	// The image is drawn to fit (contain): its scale and offset in the widget.
	iw, ih := float32(e.shown.Rect.Dx()), float32(e.shown.Rect.Dy())
	scale := min(e.Size().Width/iw, e.Size().Height/ih)
	ox, oy := (e.Size().Width-iw*scale)/2, (e.Size().Height-ih*scale)/2
	x, y := int((pos.X-ox)/scale), int((pos.Y-oy)/scale)
	d := e.run.g.Dims()
	for cy := range d[1] {
		for cx := range d[0] {
			if image.Pt(x, y).In(e.layout.CellRect(cx, cy)) {
				return e.z*e.run.g.PerGrid() + cy*d[0] + cx
			}
		}
	}
	return -1
}

// Tapped opens the menu of the cell under the tap.
func (e *exploreSheet) Tapped(ev *fyne.PointEvent) {
	i := e.cellAt(ev.Position)
	if i < 0 || e.run.pictures[i] == nil {
		return
	}
	widget.ShowPopUpMenuAtPosition(e.cellMenu(i), e.s.win.Canvas(), ev.AbsolutePosition)
}

// cellMenu is a finished cell's menu.
func (e *exploreSheet) cellMenu(i int) *fyne.Menu {
	return fyne.NewMenu("",
		fyne.NewMenuItem("Restore settings", func() { e.restore(i) }),
		fyne.NewMenuItem("Vary", func() { e.asSheetCell(i, func(c *gallery.Cell) { e.s.varyCell(c, 0.2) }) }),
		fyne.NewMenuItem("Refine", func() { e.asSheetCell(i, func(c *gallery.Cell) { e.s.secondPass(c, 1) }) }),
		fyne.NewMenuItem("Upscale ×2", func() { e.asSheetCell(i, func(c *gallery.Cell) { e.s.secondPass(c, 2) }) }),
	)
}

// restore fills the controls from cell i's settings (as History restores an image).
func (e *exploreSheet) restore(i int) {
	e.s.restore(history.Entry{Path: e.run.paths[i], Settings: e.run.sets[i]})
}

// asSheetCell runs a contact-sheet action on cell i: the cell as a sheet cell, its own draft as
// the sheet's (its seed, steps and CFG).
func (e *exploreSheet) asSheetCell(i int, do func(*gallery.Cell)) {
	d := e.run.drafts[i]
	e.s.sheetDraft = d
	c := &gallery.Cell{Index: i, Seed: d.Seed, Final: e.run.pictures[i], Path: e.run.paths[i], Set: e.run.sets[i]}
	if d.VariationStrength > 0 {
		c.Varies, c.Variation = true, d.VariationSeed
	}
	do(c)
}
