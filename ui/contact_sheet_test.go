package ui

import (
	"image"
	"testing"

	"fyne.io/fyne/v2/test"
)

func TestContactSheetFillsAndActsOnTheSelectedImage(t *testing.T) {
	test.NewTempApp(t)
	var opened, varied, upscaled *sheetCell
	var strength, factor float64
	sheet := newContactSheet(sheetActions{
		open:    func(c *sheetCell) { opened = c },
		vary:    func(c *sheetCell, s float64) { varied, strength = c, s },
		upscale: func(c *sheetCell, f float64) { upscaled, factor = c, f },
	})
	if sheet.box.Visible() {
		t.Fatal("the sheet shows before any batch")
	}
	sheet.begin("a fox", []uint64{7, 8, 9, 10}, nil)
	if !sheet.box.Visible() || len(sheet.grid.Objects) != 4 || sheet.done() != 0 {
		t.Fatalf("begin: visible %v, %d cells, %d done", sheet.box.Visible(), len(sheet.grid.Objects), sheet.done())
	}
	pic := image.NewNRGBA(image.Rect(0, 0, 4, 4))
	sheet.preview(0, pic)
	if c := sheet.cell(0); c.state != cellRunning || c.img.Image == nil {
		t.Fatalf("preview: state %v", c.state)
	}
	sheet.finished(0, pic, pic)
	sheet.saved(0, "/out/easel-7.png")
	sheet.preview(1, pic)
	if sheet.done() != 1 || sheet.cell(1).state != cellRunning || sheet.cell(2).state != cellWaiting {
		t.Fatalf("after one image: %d done", sheet.done())
	}
	if !sheet.vary.Disabled() {
		t.Error("Vary is on with nothing selected")
	}
	test.Tap(sheet.cell(0))
	if opened != sheet.cell(0) || sheet.vary.Disabled() || sheet.up2.Disabled() || sheet.discard.Disabled() || !sheet.keep.Disabled() {
		t.Fatalf("selecting a saved image: opened %v, vary off %v, upscale off %v", opened, sheet.vary.Disabled(), sheet.up2.Disabled())
	}
	test.Tap(sheet.vary)
	test.Tap(sheet.up15)
	if varied != sheet.cell(0) || strength != 0.2 || upscaled != sheet.cell(0) || factor != 1.5 {
		t.Errorf("vary %v at %g, upscale %v ×%g", varied, strength, upscaled, factor)
	}
	sheet.discarded(sheet.cell(0))
	if sheet.keep.Disabled() || !sheet.discard.Disabled() || !sheet.up2.Disabled() {
		t.Error("a discarded image offers Discard or Upscale, or not Keep")
	}
	sheet.stopped()
	if sheet.cell(1).state != cellFailed || sheet.cell(3).state != cellFailed {
		t.Errorf("stopped batch: states %v %v", sheet.cell(1).state, sheet.cell(3).state)
	}
	sheet.begin("a fox, varied", []uint64{7, 7}, []uint64{100, 101})
	if c := sheet.cell(1); !c.varies || c.variation != 101 || c.caption.Text != "2 · waiting" || c.seedLine.Text != "var 101" {
		t.Errorf("variation cell: %+v %q / %q", c.variation, c.caption.Text, c.seedLine.Text)
	}
}

// A cell shows its whole seed (and a variation its whole variation seed), the largest a seed
// field gives, within the cell: nothing truncated.
func TestContactSheetShowsWholeSeeds(t *testing.T) {
	test.NewTempApp(t)
	sheet := newContactSheet(sheetActions{})
	sheet.begin("a fox", []uint64{4294967295, 4294967295}, []uint64{0, 4294967295})
	sheet.cell(0).varies = false
	sheet.cell(0).refreshCaption()
	for i, want := range []string{"seed 4294967295", "var 4294967295"} {
		c := sheet.cell(i)
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
