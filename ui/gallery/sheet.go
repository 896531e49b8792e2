package gallery

import (
	"fmt"
	"image"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/compose"

	"easel/ui/kit"
)

// CellState is where one image of a batch is.
type CellState int

const (
	CellWaiting   CellState = iota // not started
	CellRunning                    // stepping: the cell shows its live preview
	CellDone                       // decoded (and saved, once path is set)
	CellFailed                     // the batch stopped before this image
	CellDiscarded                  // the artist discarded it (its file is removed)
)

var cellStateNames = [...]string{"waiting", "running", "done", "stopped", "discarded"}

// Actions are what the contact sheet's buttons do; the window supplies them.
type Actions struct {
	Open    func(c *Cell)                   // show the image on the canvas
	Discard func(c *Cell)                   // remove its file
	Keep    func(c *Cell)                   // take back a discard (save it again)
	Vary    func(c *Cell, strength float64) // a batch of variations around it
	Refine  func(c *Cell)                   // a low-strength pass over it at its own size
	Upscale func(c *Cell, factor float64)   // a second pass at a larger size
	Menu    func(c *Cell) *fyne.Menu        // its right-click menu (Describe, Check); nil: none
}

// Sheet is a batch's images as a grid that fills as they finish: each cell shows its
// image's live preview while it steps and the decoded picture once done. A click shows one on
// the canvas and selects it for Keep / Discard, Vary, Refine and Upscale. Vary's variations open
// in a tab beside the batch they came from, which stays a tab away (up to maxSheetGroups).
type Sheet struct {
	act      Actions
	groups   []*sheetGroup // the tabs, oldest first
	live     *sheetGroup   // the latest batch: its job's events fill it
	shown    *sheetGroup   // the tab in view
	label    string        // the live batch's prompt and first seed
	cells    []*Cell       // the live batch's cells
	grid     *fyne.Container
	selected *Cell

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
	Box      *fyne.Container
}

// sheetGroup is one batch on the sheet: a tab with its cells and the draft that made them.
type sheetGroup struct {
	label string
	cells []*Cell
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

func NewSheet(act Actions) *Sheet {
	c := &Sheet{act: act, title: widget.NewLabel(""), tabs: container.NewAppTabs()}
	c.tabs.OnSelected = func(t *container.TabItem) {
		for _, g := range c.groups {
			if g.tab == t && g != c.shown {
				c.showGroup(g)
			}
		}
	}
	c.title.Wrapping = fyne.TextWrapWord
	c.keep = widget.NewButtonWithIcon("Keep", theme.ConfirmIcon(), func() { c.onSelected(c.act.Keep) })
	c.discard = widget.NewButtonWithIcon("Discard", theme.DeleteIcon(), func() { c.onSelected(c.act.Discard) })
	c.strength = widget.NewSlider(0.1, 0.3)
	c.strength.Step = 0.05
	c.strength.Value = 0.2
	c.vary = widget.NewButton("Vary", func() {
		c.onSelected(func(cell *Cell) { c.act.Vary(cell, c.strength.Value) })
	})
	c.refine = widget.NewButton("Refine", func() { c.onSelected(c.act.Refine) })
	c.up15 = widget.NewButton("Upscale ×1.5", func() { c.onSelected(func(cell *Cell) { c.act.Upscale(cell, 1.5) }) })
	c.up2 = widget.NewButton("Upscale ×2", func() { c.onSelected(func(cell *Cell) { c.act.Upscale(cell, 2) }) })
	c.fit = widget.NewLabel("")
	c.fit.Wrapping = fyne.TextWrapWord
	c.fit.Importance = widget.LowImportance
	strengthV := widget.NewLabel(fmt.Sprintf("%.2f", c.strength.Value))
	c.strength.OnChanged = func(v float64) { strengthV.SetText(fmt.Sprintf("%.2f", v)) }
	strengthRow := container.NewBorder(nil, nil, widget.NewLabel("Variation strength"), strengthV, c.strength)
	c.Box = container.NewBorder(container.NewVBox(kit.Heading("Batch"), c.title),
		container.NewVBox(container.NewGridWithColumns(3, c.keep, c.discard, c.vary, c.refine, c.up15, c.up2), strengthRow, c.fit),
		nil, nil, c.tabs)
	c.Box.Hide()
	c.updateButtons()
	return c
}

// onSelected runs f on the selected cell, if any and f is set.
func (c *Sheet) onSelected(f func(*Cell)) {
	if c.selected != nil && f != nil {
		f(c.selected)
	}
}

// Begin shows a new batch in place of the sheet's tabs: one waiting cell per seed (variation
// seeds, when the batch varies an image, in variations).
func (c *Sheet) Begin(label string, seeds []uint64, variations []uint64) {
	c.groups = nil
	c.BeginBeside("Batch", label, seeds, variations)
}

// BeginBeside shows a new batch in a tab of its own (named tab) beside the ones there, and
// selects it; the oldest tab goes beyond maxSheetGroups.
func (c *Sheet) BeginBeside(tab, label string, seeds []uint64, variations []uint64) {
	g := &sheetGroup{label: label, grid: container.NewGridWrap(fyne.NewSize(sheetCellSize, sheetCellSize+sheetCaptionHeight))}
	objs := make([]fyne.CanvasObject, 0, len(seeds))
	for i, s := range seeds {
		cell := newCell(c, i, s)
		cell.group = g
		if i < len(variations) {
			cell.Variation, cell.Varies = variations[i], true
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
	c.Box.Show()
}

// showGroup brings a batch's tab into view; the selection (in the tab left) is cleared.
func (c *Sheet) showGroup(g *sheetGroup) {
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

// Cell is image i of the batch, or nil.
func (c *Sheet) Cell(i int) *Cell {
	if i < 0 || i >= len(c.cells) {
		return nil
	}
	return c.cells[i]
}

// Preview shows image i's live preview (framed: over the checkerboard).
func (c *Sheet) Preview(i int, framed image.Image) {
	if cell := c.Cell(i); cell != nil && cell.State <= CellRunning {
		cell.State = CellRunning
		cell.show(framed)
		c.updateTitle()
	}
}

// Finished shows image i decoded: final is the picture, framed the same over the checkerboard.
func (c *Sheet) Finished(i int, final, framed image.Image) {
	if cell := c.Cell(i); cell != nil {
		cell.State, cell.Final = CellDone, final
		cell.show(framed)
		c.updateTitle()
		c.updateButtons()
	}
}

// Saved records where image i was saved.
func (c *Sheet) Saved(i int, path string) {
	if cell := c.Cell(i); cell != nil {
		cell.Path = path
		cell.refreshCaption()
		c.updateButtons()
	}
}

// Stopped marks every image not finished as stopped (the batch failed or was cancelled).
func (c *Sheet) Stopped() {
	for _, cell := range c.cells {
		if cell.State <= CellRunning {
			cell.State = CellFailed
			cell.refreshCaption()
		}
	}
	c.updateTitle()
	c.updateButtons()
}

// Discarded and kept record the outcome of Discard and Keep on a cell.
func (c *Sheet) Discarded(cell *Cell) {
	cell.State, cell.Path = CellDiscarded, ""
	cell.refreshCaption()
	c.updateButtons()
}

func (c *Sheet) Kept(cell *Cell, path string) {
	cell.State, cell.Path = CellDone, path
	cell.refreshCaption()
	c.updateButtons()
}

// SelectCell selects a cell (and shows its image through the open action).
func (c *Sheet) SelectCell(cell *Cell) {
	if c.selected != nil {
		c.selected.setSelected(false)
	}
	c.selected = cell
	cell.setSelected(true)
	c.updateButtons()
	if c.act.Open != nil && cell.State != CellWaiting {
		c.act.Open(cell)
	}
}

// Done counts the live batch's finished images.
func (c *Sheet) Done() int { return finishedCells(c.cells) }

func finishedCells(cells []*Cell) int {
	n := 0
	for _, cell := range cells {
		if cell.State == CellDone || cell.State == CellDiscarded {
			n++
		}
	}
	return n
}

// updateTitle says what the tab in view holds.
func (c *Sheet) updateTitle() {
	g := c.shown
	if g == nil {
		return
	}
	c.title.SetText(fmt.Sprintf("%s — %d of %d finished. Click one to view it; then keep or discard it, vary it, refine it or upscale it.",
		g.label, finishedCells(g.cells), len(g.cells)))
	c.Box.Refresh() // the title's lines changed: the tabs under it are placed again
}

// updateButtons enables the actions that apply to the selected cell: Discard for a saved image,
// Keep for a discarded one, Vary for any finished one, Refine and Upscale for a saved one.
func (c *Sheet) updateButtons() {
	set := func(b *widget.Button, on bool) {
		if on {
			b.Enable()
		} else {
			b.Disable()
		}
	}
	sel := c.selected
	saved := sel != nil && sel.State == CellDone && sel.Path != ""
	set(c.discard, saved)
	set(c.keep, sel != nil && sel.State == CellDiscarded)
	set(c.vary, sel != nil && (sel.State == CellDone || sel.State == CellDiscarded))
	set(c.refine, saved)
	set(c.up15, saved)
	set(c.up2, saved)
	c.Box.Refresh() // the plan's words under the buttons may have changed
}

// HasBatch reports whether the sheet holds a batch (Vary's variations open beside it then).
func (c *Sheet) HasBatch() bool { return c.live != nil }

// Groups is how many batches the sheet holds (its tabs).
func (c *Sheet) Groups() int { return len(c.groups) }

// SetLiveDraft records what the live batch was made from (its cells' second passes start from it).
func (c *Sheet) SetLiveDraft(d compose.Draft) {
	if c.live != nil {
		c.live.draft = d
	}
}

// SetPlan says the selected image's upscale plan under the buttons.
func (c *Sheet) SetPlan(text string) { c.fit.SetText(text) }

// Cells are the live batch's cells, in order.
func (c *Sheet) Cells() []*Cell { return c.cells }

// GroupCells are the cells of the sheet's tab i (oldest first).
func (c *Sheet) GroupCells(i int) []*Cell { return c.groups[i].cells }

// Title is what the tab in view says of its batch.
func (c *Sheet) Title() string { return c.title.Text }

// Plan is the selected image's upscale plan as said under the buttons.
func (c *Sheet) Plan() string { return c.fit.Text }

// Tabs are the tabs' names and the one selected.
func (c *Sheet) Tabs() (names []string, selected int) {
	selected = -1
	for i, t := range c.tabs.Items {
		names = append(names, t.Text)
		if c.tabs.Selected() == t {
			selected = i
		}
	}
	return names, selected
}

// SelectTab brings tab i into view, as a click on it does.
func (c *Sheet) SelectTab(i int) { c.tabs.Select(c.tabs.Items[i]) }

// Button is the sheet's button named label (Keep, Discard, Vary, Refine, Upscale ×1.5,
// Upscale ×2), nil for none.
func (c *Sheet) Button(label string) *widget.Button {
	for _, b := range []*widget.Button{c.keep, c.discard, c.vary, c.refine, c.up15, c.up2} {
		if b.Text == label {
			return b
		}
	}
	return nil
}
