package ui

import (
	"fmt"
	"image"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/compose"
	"easel/app/imagefile"

	"easel/ui/kit"
)

// cellState is where one image of a batch is.
type cellState int

const (
	cellWaiting   cellState = iota // not started
	cellRunning                    // stepping: the cell shows its live preview
	cellDone                       // decoded (and saved, once path is set)
	cellFailed                     // the batch stopped before this image
	cellDiscarded                  // the artist discarded it (its file is removed)
)

var cellStateNames = [...]string{"waiting", "running", "done", "stopped", "discarded"}

// sheetActions are what the contact sheet's buttons do; the window supplies them.
type sheetActions struct {
	open    func(c *sheetCell)                   // show the image on the canvas
	discard func(c *sheetCell)                   // remove its file
	keep    func(c *sheetCell)                   // take back a discard (save it again)
	vary    func(c *sheetCell, strength float64) // a batch of variations around it
	refine  func(c *sheetCell)                   // a low-strength pass over it at its own size
	upscale func(c *sheetCell, factor float64)   // a second pass at a larger size
	menu    func(c *sheetCell) *fyne.Menu        // its right-click menu (Describe, Check); nil: none
}

// contactSheet is a batch's images as a grid that fills as they finish: each cell shows its
// image's live preview while it steps and the decoded picture once done. A click shows one on
// the canvas and selects it for Keep / Discard, Vary, Refine and Upscale. Vary's variations open
// in a tab beside the batch they came from, which stays a tab away (up to maxSheetGroups).
type contactSheet struct {
	act      sheetActions
	groups   []*sheetGroup // the tabs, oldest first
	live     *sheetGroup   // the latest batch: its job's events fill it
	shown    *sheetGroup   // the tab in view
	label    string        // the live batch's prompt and first seed
	cells    []*sheetCell  // the live batch's cells
	grid     *fyne.Container
	selected *sheetCell

	title    *widget.Label
	tabs     *container.AppTabs
	keep     *widget.Button
	discard  *widget.Button
	vary     *widget.Button
	strength *widget.Slider
	refine   *widget.Button
	up15     *widget.Button
	up2      *widget.Button
	fit      *widget.Label // the selected image's upscale plan: whether it fits, the time expected
	box      *fyne.Container
}

// sheetGroup is one batch on the sheet: a tab with its cells and the draft that made them.
type sheetGroup struct {
	label string
	cells []*sheetCell
	grid  *fyne.Container
	tab   *container.TabItem
	draft compose.Draft
}

// sheetCellSize is a cell's thumbnail size.
const sheetCellSize = 96

// sheetCaptionHeight is the room under a cell's thumbnail for its two caption lines.
const sheetCaptionHeight = 38

// maxSheetGroups is how many batches the sheet keeps as tabs (a batch and its variations).
const maxSheetGroups = 8

func newContactSheet(act sheetActions) *contactSheet {
	c := &contactSheet{act: act, title: widget.NewLabel(""), tabs: container.NewAppTabs()}
	c.tabs.OnSelected = func(t *container.TabItem) {
		for _, g := range c.groups {
			if g.tab == t && g != c.shown {
				c.showGroup(g)
			}
		}
	}
	c.title.Wrapping = fyne.TextWrapWord
	c.keep = widget.NewButtonWithIcon("Keep", theme.ConfirmIcon(), func() { c.onSelected(c.act.keep) })
	c.discard = widget.NewButtonWithIcon("Discard", theme.DeleteIcon(), func() { c.onSelected(c.act.discard) })
	c.strength = widget.NewSlider(0.1, 0.3)
	c.strength.Step = 0.05
	c.strength.Value = 0.2
	c.vary = widget.NewButton("Vary", func() {
		c.onSelected(func(cell *sheetCell) { c.act.vary(cell, c.strength.Value) })
	})
	c.refine = widget.NewButton("Refine", func() { c.onSelected(c.act.refine) })
	c.up15 = widget.NewButton("Upscale ×1.5", func() { c.onSelected(func(cell *sheetCell) { c.act.upscale(cell, 1.5) }) })
	c.up2 = widget.NewButton("Upscale ×2", func() { c.onSelected(func(cell *sheetCell) { c.act.upscale(cell, 2) }) })
	c.fit = widget.NewLabel("")
	c.fit.Wrapping = fyne.TextWrapWord
	c.fit.Importance = widget.LowImportance
	strengthV := widget.NewLabel(fmt.Sprintf("%.2f", c.strength.Value))
	c.strength.OnChanged = func(v float64) { strengthV.SetText(fmt.Sprintf("%.2f", v)) }
	strengthRow := container.NewBorder(nil, nil, widget.NewLabel("Variation strength"), strengthV, c.strength)
	c.box = container.NewBorder(container.NewVBox(kit.Heading("Batch"), c.title),
		container.NewVBox(container.NewGridWithColumns(3, c.keep, c.discard, c.vary, c.refine, c.up15, c.up2), strengthRow, c.fit),
		nil, nil, c.tabs)
	c.box.Hide()
	c.updateButtons()
	return c
}

// onSelected runs f on the selected cell, if any and f is set.
func (c *contactSheet) onSelected(f func(*sheetCell)) {
	if c.selected != nil && f != nil {
		f(c.selected)
	}
}

// begin shows a new batch in place of the sheet's tabs: one waiting cell per seed (variation
// seeds, when the batch varies an image, in variations).
func (c *contactSheet) begin(label string, seeds []uint64, variations []uint64) {
	c.groups = nil
	c.beginBeside("Batch", label, seeds, variations)
}

// beginBeside shows a new batch in a tab of its own (named tab) beside the ones there, and
// selects it; the oldest tab goes beyond maxSheetGroups.
func (c *contactSheet) beginBeside(tab, label string, seeds []uint64, variations []uint64) {
	g := &sheetGroup{label: label, grid: container.NewGridWrap(fyne.NewSize(sheetCellSize, sheetCellSize+sheetCaptionHeight))}
	objs := make([]fyne.CanvasObject, 0, len(seeds))
	for i, s := range seeds {
		cell := newSheetCell(c, i, s)
		cell.group = g
		if i < len(variations) {
			cell.variation, cell.varies = variations[i], true
			cell.refreshCaption()
		}
		g.cells = append(g.cells, cell)
		objs = append(objs, cell)
	}
	g.grid.Objects = objs
	g.tab = container.NewTabItem(tab, container.NewVScroll(g.grid))
	c.groups = append(c.groups, g)
	if len(c.groups) > maxSheetGroups {
		c.groups = c.groups[len(c.groups)-maxSheetGroups:]
	}
	items := make([]*container.TabItem, len(c.groups))
	for i, g := range c.groups {
		items[i] = g.tab
	}
	c.live, c.label, c.cells, c.grid = g, label, g.cells, g.grid
	c.shown = nil
	c.tabs.SetItems(items)
	c.showGroup(g)
	c.box.Show()
}

// showGroup brings a batch's tab into view; the selection (in the tab left) is cleared.
func (c *contactSheet) showGroup(g *sheetGroup) {
	if c.selected != nil {
		c.selected.setSelected(false)
		c.selected = nil
	}
	c.shown = g
	if c.tabs.Selected() != g.tab {
		c.tabs.Select(g.tab)
	}
	c.updateTitle()
	c.updateButtons()
}

// cell is image i of the batch, or nil.
func (c *contactSheet) cell(i int) *sheetCell {
	if i < 0 || i >= len(c.cells) {
		return nil
	}
	return c.cells[i]
}

// preview shows image i's live preview (framed: over the checkerboard).
func (c *contactSheet) preview(i int, framed image.Image) {
	if cell := c.cell(i); cell != nil && cell.state <= cellRunning {
		cell.state = cellRunning
		cell.show(framed)
		c.updateTitle()
	}
}

// finished shows image i decoded: final is the picture, framed the same over the checkerboard.
func (c *contactSheet) finished(i int, final, framed image.Image) {
	if cell := c.cell(i); cell != nil {
		cell.state, cell.final = cellDone, final
		cell.show(framed)
		c.updateTitle()
		c.updateButtons()
	}
}

// saved records where image i was saved.
func (c *contactSheet) saved(i int, path string) {
	if cell := c.cell(i); cell != nil {
		cell.path = path
		cell.refreshCaption()
		c.updateButtons()
	}
}

// stopped marks every image not finished as stopped (the batch failed or was cancelled).
func (c *contactSheet) stopped() {
	for _, cell := range c.cells {
		if cell.state <= cellRunning {
			cell.state = cellFailed
			cell.refreshCaption()
		}
	}
	c.updateTitle()
	c.updateButtons()
}

// discarded and kept record the outcome of Discard and Keep on a cell.
func (c *contactSheet) discarded(cell *sheetCell) {
	cell.state, cell.path = cellDiscarded, ""
	cell.refreshCaption()
	c.updateButtons()
}

func (c *contactSheet) kept(cell *sheetCell, path string) {
	cell.state, cell.path = cellDone, path
	cell.refreshCaption()
	c.updateButtons()
}

// selectCell selects a cell (and shows its image through the open action).
func (c *contactSheet) selectCell(cell *sheetCell) {
	if c.selected != nil {
		c.selected.setSelected(false)
	}
	c.selected = cell
	cell.setSelected(true)
	c.updateButtons()
	if c.act.open != nil && cell.state != cellWaiting {
		c.act.open(cell)
	}
}

// done counts the live batch's finished images.
func (c *contactSheet) done() int { return finishedCells(c.cells) }

func finishedCells(cells []*sheetCell) int {
	n := 0
	for _, cell := range cells {
		if cell.state == cellDone || cell.state == cellDiscarded {
			n++
		}
	}
	return n
}

// updateTitle says what the tab in view holds.
func (c *contactSheet) updateTitle() {
	g := c.shown
	if g == nil {
		return
	}
	c.title.SetText(fmt.Sprintf("%s — %d of %d finished. Click one to view it; then keep or discard it, vary it, refine it or upscale it.",
		g.label, finishedCells(g.cells), len(g.cells)))
	c.box.Refresh() // the title's lines changed: the tabs under it are placed again
}

// updateButtons enables the actions that apply to the selected cell: Discard for a saved image,
// Keep for a discarded one, Vary for any finished one, Refine and Upscale for a saved one.
func (c *contactSheet) updateButtons() {
	set := func(b *widget.Button, on bool) {
		if on {
			b.Enable()
		} else {
			b.Disable()
		}
	}
	sel := c.selected
	saved := sel != nil && sel.state == cellDone && sel.path != ""
	set(c.discard, saved)
	set(c.keep, sel != nil && sel.state == cellDiscarded)
	set(c.vary, sel != nil && (sel.state == cellDone || sel.state == cellDiscarded))
	set(c.refine, saved)
	set(c.up15, saved)
	set(c.up2, saved)
	c.box.Refresh() // the plan's words under the buttons may have changed
}

// sheetCell is one image of a batch: its thumbnail, seed and state.
type sheetCell struct {
	widget.BaseWidget
	sheet     *contactSheet
	group     *sheetGroup // the batch it belongs to (nil: an Explore cell acted on)
	index     int
	seed      uint64
	variation uint64 // the variation seed, when varies
	varies    bool
	state     cellState
	final     image.Image         // the decoded picture (Done)
	path      string              // where it was saved ("" before, or once discarded)
	set       *imagefile.Settings // what its PNG records

	img      *canvas.Image
	caption  *canvas.Text // its number and state
	seedLine *canvas.Text // its whole seed, or variation seed
	frame    *canvas.Rectangle
	selected bool
}

func newSheetCell(sheet *contactSheet, i int, seed uint64) *sheetCell {
	c := &sheetCell{sheet: sheet, index: i, seed: seed, img: canvas.NewImageFromImage(nil)}
	c.img.FillMode = canvas.ImageFillContain
	c.img.SetMinSize(fyne.NewSize(sheetCellSize, sheetCellSize))
	for _, t := range []**canvas.Text{&c.caption, &c.seedLine} {
		*t = canvas.NewText("", theme.Color(theme.ColorNameForeground))
		(*t).Alignment = fyne.TextAlignCenter
		(*t).TextSize = theme.CaptionTextSize()
	}
	c.frame = canvas.NewRectangle(color.Transparent)
	c.frame.StrokeWidth = 2
	c.refreshCaption()
	c.ExtendBaseWidget(c)
	return c
}

func (c *sheetCell) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(container.NewBorder(nil, container.NewVBox(c.caption, c.seedLine), nil, nil, container.NewStack(c.img, c.frame)))
}

// Tapped selects the cell and shows its image.
func (c *sheetCell) Tapped(*fyne.PointEvent) { c.sheet.selectCell(c) }

func (c *sheetCell) show(framed image.Image) {
	c.img.Image = framed
	c.img.Refresh()
	c.refreshCaption()
}

func (c *sheetCell) setSelected(on bool) {
	c.selected = on
	if on {
		c.frame.StrokeColor = theme.Color(theme.ColorNamePrimary)
	} else {
		c.frame.StrokeColor = color.Transparent
	}
	c.frame.Refresh()
}

// refreshCaption says the cell's place and state on one line and its whole seed (or variation
// seed) on the next, in caption-size text that fits the cell untruncated.
func (c *sheetCell) refreshCaption() {
	s := fmt.Sprintf("%d", c.index+1)
	if c.state != cellDone {
		s += " · " + cellStateNames[c.state]
	}
	c.caption.Text = s
	if c.varies {
		c.seedLine.Text = fmt.Sprintf("var %d", c.variation)
	} else {
		c.seedLine.Text = fmt.Sprintf("seed %d", c.seed)
	}
	c.caption.Refresh()
	c.seedLine.Refresh()
}
