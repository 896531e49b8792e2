package gallery

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"os"
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/compose"
	"easel/app/imagefile"

	"easel/ui/kit"
)

// Cell is one image of a batch: its thumbnail, seed and state.
type Cell struct {
	widget.BaseWidget
	sheet     *Sheet
	group     *sheetGroup // the batch it belongs to (nil: an Explore cell acted on)
	Index     int
	Seed      uint64
	Variation uint64 // the variation seed, when Varies
	Varies    bool
	State     CellState
	Final     image.Image         // the decoded picture (Done)
	Path      string              // where it was saved ("" before, or once discarded)
	Set       *imagefile.Settings // what its PNG records

	img      *canvas.Image
	caption  *canvas.Text // its number and state
	seedLine *canvas.Text // its whole seed, or variation seed
	// The two lines' whole texts: each line shows as much as fits the cell (fitCaptions).
	captionText, seedText string
	frame                 *canvas.Rectangle
	selected              bool
}

func newCell(sheet *Sheet, i int, seed uint64) *Cell {
	c := &Cell{sheet: sheet, Index: i, Seed: seed, img: canvas.NewImageFromImage(nil)}
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

func (c *Cell) CreateRenderer() fyne.WidgetRenderer {
	return cellRenderer{widget.NewSimpleRenderer(container.NewBorder(nil, container.NewVBox(c.caption, c.seedLine), nil, nil, container.NewStack(c.img, c.frame))), c}
}

// cellRenderer fits the caption lines to the cell's width each time it is laid out.
type cellRenderer struct {
	fyne.WidgetRenderer
	c *Cell
}

func (r cellRenderer) Layout(size fyne.Size) {
	r.c.fitCaptions(size.Width)
	r.WidgetRenderer.Layout(size)
}

// fitCaptions shows each caption line whole where it fits the cell (every seed up to 4294967295
// does) and cut short with an ellipsis where it does not (a typed 20-digit seed), rather than
// drawing over the next cell.
func (c *Cell) fitCaptions(width float32) {
	if width <= 0 {
		width = sheetCellSize
	}
	c.caption.Text = kit.FitText(c.captionText, c.caption.TextSize, width)
	c.seedLine.Text = kit.FitText(c.seedText, c.seedLine.TextSize, width)
	c.caption.Refresh()
	c.seedLine.Refresh()
}

// Tapped selects the cell and shows its image.
func (c *Cell) Tapped(*fyne.PointEvent) { c.sheet.SelectCell(c) }

func (c *Cell) show(framed image.Image) {
	c.img.Image = framed
	c.img.Refresh()
	c.refreshCaption()
}

func (c *Cell) setSelected(on bool) {
	c.selected = on
	if on {
		c.frame.StrokeColor = theme.Color(theme.ColorNamePrimary)
	} else {
		c.frame.StrokeColor = color.Transparent
	}
	c.frame.Refresh()
}

// refreshCaption says the cell's place and state on one line and its whole seed (or variation
// seed) on the next, in caption-size text that fits the cell untruncated up to ten digits.
func (c *Cell) refreshCaption() {
	s := fmt.Sprintf("%d", c.Index+1)
	if c.State != CellDone {
		s += " · " + cellStateNames[c.State]
	}
	c.captionText = s
	if c.Varies {
		c.seedText = fmt.Sprintf("var %d", c.Variation)
	} else {
		c.seedText = fmt.Sprintf("seed %d", c.Seed)
	}
	c.fitCaptions(c.Size().Width)
}

// TappedSecondary opens a batch image's menu (when the sheet has one).
func (c *Cell) TappedSecondary(ev *fyne.PointEvent) {
	if c.sheet.act.Menu == nil {
		return
	}
	if cv := fyne.CurrentApp().Driver().CanvasForObject(c); cv != nil {
		widget.ShowPopUpMenuAtPosition(c.sheet.act.Menu(c), cv, ev.AbsolutePosition)
	}
}

// SourceName is how a second pass's PNG names the image it started from: the saved file's name,
// else its place in the batch.
func (c *Cell) SourceName() string {
	if c.Path != "" {
		return filepath.Base(c.Path)
	}
	return fmt.Sprintf("batch image %d", c.Index+1)
}

// SourceHash is the SHA-256 of the saved file the second pass started from ("" before it is
// saved), so the PNG names its source exactly.
func (c *Cell) SourceHash() string {
	if c.Path == "" {
		return ""
	}
	data, err := os.ReadFile(c.Path)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Draft is what the cell's batch was made from (false for a cell of no batch on this sheet: an
// Explore cell acted on).
func (c *Cell) Draft() (compose.Draft, bool) {
	if c.group == nil {
		return compose.Draft{}, false
	}
	return c.group.draft, true
}

// String is the state as a cell's caption says it ("running").
func (s CellState) String() string { return cellStateNames[s] }
