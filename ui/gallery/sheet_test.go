package gallery

import (
	"image"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

func TestContactSheetFillsAndActsOnTheSelectedImage(t *testing.T) {
	test.NewTempApp(t)
	var opened, varied, upscaled *Cell
	var strength, factor float64
	sheet := NewSheet(Actions{
		Open:    func(c *Cell) { opened = c },
		Vary:    func(c *Cell, s float64) { varied, strength = c, s },
		Upscale: func(c *Cell, f float64) { upscaled, factor = c, f },
	})
	if sheet.Box.Visible() {
		t.Fatal("the sheet shows before any batch")
	}
	sheet.Begin("a fox", []uint64{7, 8, 9, 10}, nil)
	if !sheet.Box.Visible() || len(sheet.grid.Objects) != 4 || sheet.Done() != 0 {
		t.Fatalf("begin: visible %v, %d cells, %d done", sheet.Box.Visible(), len(sheet.grid.Objects), sheet.Done())
	}
	pic := image.NewNRGBA(image.Rect(0, 0, 4, 4))
	sheet.Preview(0, pic)
	if c := sheet.Cell(0); c.State != CellRunning || c.img.Image == nil {
		t.Fatalf("preview: state %v", c.State)
	}
	sheet.Finished(0, pic, pic)
	sheet.Saved(0, "/out/easel-7.png")
	sheet.Preview(1, pic)
	if sheet.Done() != 1 || sheet.Cell(1).State != CellRunning || sheet.Cell(2).State != CellWaiting {
		t.Fatalf("after one image: %d done", sheet.Done())
	}
	if !sheet.vary.Disabled() {
		t.Error("Vary is on with nothing selected")
	}
	test.Tap(sheet.Cell(0))
	if opened != sheet.Cell(0) || sheet.vary.Disabled() || sheet.up2.Disabled() || sheet.discard.Disabled() || !sheet.keep.Disabled() {
		t.Fatalf("selecting a saved image: opened %v, vary off %v, upscale off %v", opened, sheet.vary.Disabled(), sheet.up2.Disabled())
	}
	test.Tap(sheet.vary)
	test.Tap(sheet.up15)
	if varied != sheet.Cell(0) || strength != 0.2 || upscaled != sheet.Cell(0) || factor != 1.5 {
		t.Errorf("vary %v at %g, upscale %v ×%g", varied, strength, upscaled, factor)
	}
	sheet.Discarded(sheet.Cell(0))
	if sheet.keep.Disabled() || !sheet.discard.Disabled() || !sheet.up2.Disabled() {
		t.Error("a discarded image offers Discard or Upscale, or not Keep")
	}
	sheet.Stopped()
	if sheet.Cell(1).State != CellFailed || sheet.Cell(3).State != CellFailed {
		t.Errorf("stopped batch: states %v %v", sheet.Cell(1).State, sheet.Cell(3).State)
	}
	sheet.Begin("a fox, varied", []uint64{7, 7}, []uint64{100, 101})
	if c := sheet.Cell(1); !c.Varies || c.Variation != 101 || c.caption.Text != "2 · waiting" || c.seedLine.Text != "var 101" {
		t.Errorf("variation cell: %+v %q / %q", c.Variation, c.caption.Text, c.seedLine.Text)
	}
}

// A cell shows its whole seed (and a variation its whole variation seed), the largest a seed
// field gives, within the cell: nothing truncated.
func TestContactSheetShowsWholeSeeds(t *testing.T) {
	test.NewTempApp(t)
	sheet := NewSheet(Actions{})
	sheet.Begin("a fox", []uint64{4294967295, 4294967295}, []uint64{0, 4294967295})
	sheet.Cell(0).Varies = false
	sheet.Cell(0).refreshCaption()
	for i, want := range []string{"seed 4294967295", "var 4294967295"} {
		c := sheet.Cell(i)
		if c.seedLine.Text != want {
			t.Errorf("cell %d says %q, want %q", i+1, c.seedLine.Text, want)
		}
		if w := c.seedLine.MinSize().Width; w > sheetCellSize {
			t.Errorf("cell %d's %q is %.0f wide, more than the %d-wide cell", i+1, c.seedLine.Text, w, sheetCellSize)
		}
		if m := c.MinSize(); m.Height > sheetCellSize+sheetCaptionHeight || m.Width > sheetCellSize {
			t.Errorf("cell %d needs %v, more than the sheet's %d×%d cells", i+1, m, sheetCellSize, sheetCellSize+sheetCaptionHeight)
		}
	}
}

// A typed seed of twenty digits does not fit a cell: its line ends in an ellipsis within the
// cell instead of drawing over the next one.
func TestContactSheetCutsATwentyDigitSeedShort(t *testing.T) {
	test.NewTempApp(t)
	sheet := NewSheet(Actions{})
	sheet.Begin("a fox", []uint64{18446744073709551615}, nil)
	c := sheet.Cell(0)
	c.Resize(fyne.NewSize(sheetCellSize, sheetCellSize+sheetCaptionHeight))
	test.WidgetRenderer(c).Layout(c.Size())
	if got := c.seedLine.Text; !strings.HasSuffix(got, "…") || !strings.HasPrefix("seed 18446744073709551615", strings.TrimSuffix(got, "…")) {
		t.Errorf("the cell says %q, want the seed's start and an ellipsis", got)
	}
	if w := c.seedLine.MinSize().Width; w > sheetCellSize {
		t.Errorf("the cell's %q is %.0f wide, more than the %d-wide cell", c.seedLine.Text, w, sheetCellSize)
	}
}
