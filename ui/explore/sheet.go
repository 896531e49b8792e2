package explore

import (
	"image"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"easel/app/grid"
	"easel/app/history"

	"easel/ui/gallery"
	"easel/ui/model"
)

// Sheet shows the grid being made in the centre: the labelled grid image (app/grid draws it,
// with placeholders for the cells to come), redrawn as each cell finishes. A tap on a finished
// cell opens its menu: restore its settings, vary, refine or upscale it. Box is its view.
type Sheet struct {
	widget.BaseWidget
	Box *fyne.Container

	p      *Panel
	run    *exploration
	z      int // the Z value shown
	img    *canvas.Image
	layout grid.Layout
	shown  *image.NRGBA
}

func newSheet(p *Panel) *Sheet {
	e := &Sheet{p: p, img: canvas.NewImageFromImage(nil)}
	e.img.FillMode = canvas.ImageFillContain
	e.img.ScaleMode = canvas.ImageScaleFastest
	e.ExtendBaseWidget(e)
	e.Box = container.NewStack(e) // the grid fills the centre
	e.Box.Hide()
	return e
}

// CreateRenderer draws the grid image.
func (e *Sheet) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(e.img) }

// MinSize is small: the grid fills the centre (drawn to fit), whatever the window's size.
func (e *Sheet) MinSize() fyne.Size {
	if e.shown == nil {
		return fyne.NewSize(0, 0)
	}
	return fyne.NewSize(160, 160)
}

// Draw draws grid g with the pictures given (by cell index; the others as placeholders), as a
// grid being made would be: for a look at a grid without running it (the layout check).
func (e *Sheet) Draw(g *grid.Grid, pictures map[int]*image.NRGBA) {
	run := newExploration(g, "")
	for i, img := range pictures {
		run.pictures[i] = img
	}
	e.begin(run)
}

// begin shows a new grid, every cell still to come.
func (e *Sheet) begin(run *exploration) {
	e.run, e.z = run, 0
	e.show()
}

// show redraws the grid from the cells finished so far (the Z value of the latest one).
func (e *Sheet) show() {
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
		e.p.model.Say(model.NoticeWarning, "The grid could not be drawn: %v", err)
		return
	}
	e.shown, e.layout = img, l
	e.img.Image = img
	e.img.Refresh()
	e.Box.Show()
	e.Refresh()
}

// Image is the grid image drawn now (nil before a grid), and its layout.
func (e *Sheet) Image() (*image.NRGBA, grid.Layout) { return e.shown, e.layout }

// Cells counts the grid's cells finished so far.
func (e *Sheet) Cells() int {
	if e.run == nil {
		return 0
	}
	return len(e.run.pictures)
}

// CellAt is the grid index of the cell under pos (a position in the widget), or -1.
func (e *Sheet) CellAt(pos fyne.Position) int {
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

// Tapped opens the menu of the finished cell under the tap.
func (e *Sheet) Tapped(ev *fyne.PointEvent) {
	i := e.CellAt(ev.Position)
	if i < 0 || e.run.pictures[i] == nil {
		return
	}
	widget.ShowPopUpMenuAtPosition(e.CellMenu(i), e.p.shell.Canvas(), ev.AbsolutePosition)
}

// CellMenu is finished cell i's menu.
func (e *Sheet) CellMenu(i int) *fyne.Menu {
	sh := e.p.shell
	return fyne.NewMenu("",
		fyne.NewMenuItem("Restore settings", func() { sh.Restore(history.Entry{Path: e.run.paths[i], Settings: e.run.sets[i]}) }),
		fyne.NewMenuItem("Vary", func() { sh.Vary(e.cell(i), e.run.drafts[i], 0.2) }),
		fyne.NewMenuItem("Refine", func() { sh.SecondPass(e.cell(i), e.run.drafts[i], 1) }),
		fyne.NewMenuItem("Upscale ×2", func() { sh.SecondPass(e.cell(i), e.run.drafts[i], 2) }),
	)
}

// cell is grid cell i as a contact-sheet cell (its picture, file, settings, seed and variation),
// for the batch region's actions.
func (e *Sheet) cell(i int) *gallery.Cell {
	d := e.run.drafts[i]
	c := &gallery.Cell{Index: i, Seed: d.Seed, Final: e.run.pictures[i], Path: e.run.paths[i], Set: e.run.sets[i]}
	if d.VariationStrength > 0 {
		c.Varies, c.Variation = true, d.VariationSeed
	}
	return c
}
