package ui

import (
	"context"
	"easel/ui/imagework"
	"image"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"

	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/memplan"
	"easel/engine/convert"
	"easel/internal/golden"
)

// TestInpaintThroughTheWindow is the window's whole image-work path on the tiny reference model:
// an image dropped on the canvas becomes the start image, a mask is painted on it by dragging the
// brush, a real generation runs from it, the saved PNG keeps the start image's pixels outside
// the painted (feathered) mask, and dropping that PNG on the window restores the start image and
// the mask exactly as they were loaded and painted, with the strength and feather.
func TestInpaintThroughTheWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("converts and runs the tiny model")
	}
	snap, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(t.TempDir(), "tiny.cmf")
	if _, err := convert.Convert(context.Background(), snap, model, convert.Options{Profile: convert.ProfileF16}); err != nil {
		t.Fatal(err)
	}
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
	h.patience = 5 * time.Minute // a hang guard: real runs are slow on a loaded 2-core machine

	startPath := h.writePNG("start.png", 256, 192)
	loaded := mustCondition(t, startPath).Image
	h.s.work.Drop(centreOf(h.s.canvas.Box), []fyne.URI{storage.NewFileURI(startPath)})
	h.pump("the start image", func() bool { return h.s.doc().Start != nil })
	fitChoice(t, h.s.work.Box()).SetSelected(imagework.FitFollowLabel)
	h.s.model.SetStrength(0.7)
	h.s.model.SetFeather(4)
	h.s.model.SetGrow(6)
	h.s.options.Steps.SetText("4")
	test.Type(h.s.prompt.Text, "a paper lantern")

	// Paint a stroke across the middle of the image, dragging the brush on the window.
	ed := h.s.canvas.Editor
	ed.Radius = 24
	scale := min(ed.Size().Width/256, ed.Size().Height/192)
	test.Drag(h.w.Canvas(), centreOf(ed).AddXY(-40*scale, 0), 80*scale, 0)
	if h.s.doc().Start.Mask.Empty() {
		t.Fatal("dragging the brush painted nothing")
	}
	painted := h.s.doc().Start.Mask.Clone()

	test.Tap(h.s.generateBtn)
	h.pump("the saved image", func() bool { return len(h.s.history.Entries) == 1 })
	e := h.s.history.Entries[0]
	savedImg, err := loadImage(e.Path)
	if err != nil {
		t.Fatal(err)
	}
	saved := savedImg.(*image.NRGBA)
	if b := saved.Rect; b.Dx() != 256 || b.Dy() != 192 {
		t.Fatalf("saved image %v, want the start image's 256×192", b)
	}
	// Far from the stroke (more than its radius, the grow and four feather widths) the start
	// image's pixels are kept exactly; on the stroke's line the picture was generated.
	kept, changed := 0, 0
	for y := range 192 {
		for x := range 256 {
			o, s := loaded.NRGBAAt(x, y), saved.NRGBAAt(x, y)
			switch {
			case y < 96-24-6-16 || y > 96+24+6+16:
				if o != s {
					t.Fatalf("kept pixel %d,%d is %v, want the start image's %v", x, y, s, o)
				}
				kept++
			case y == 96 && x > 98 && x < 158 && o != s:
				changed++
			}
		}
	}
	if kept == 0 || changed == 0 {
		t.Fatalf("%d kept pixels checked, %d changed on the stroke", kept, changed)
	}

	md, err := imagefile.ReadFile(e.Path)
	if err != nil {
		t.Fatal(err)
	}
	if in := md.Settings.Init; in == nil || in.Strength != 0.7 || in.MaskBlur != 4 || in.MaskGrow != 6 || in.Image.Name != "start.png" || in.Mask == nil || !in.KeepOriginal {
		t.Errorf("the PNG records the start image as %+v", in)
	}
	if !strings.Contains(md.Parameters, "Denoising strength: 0.7") {
		t.Errorf("the parameters text %q has no denoising strength", md.Parameters)
	}

	// Restore from the PNG: a fresh start, then the saved file dropped on the window.
	h.s.work.RemoveStart()
	h.s.model.SetStrength(0.3)
	h.s.model.SetGrow(0)
	h.s.work.Drop(fyne.NewPos(5, 5), []fyne.URI{storage.NewFileURI(e.Path)})
	h.answerRestore("Restore the recipe")
	h.pump("the restored start image", func() bool { return h.s.doc().Start != nil })
	sameNRGBA(t, "the restored start image", h.s.doc().Start.Image.Image, loaded)
	sameMask(t, "the restored mask", h.s.doc().Start.Mask.Image(), painted)
	if h.s.doc().Strength != 0.7 || h.s.doc().Feather != 4 || h.s.doc().Grow != 6 || !showsLabel(h.s.work.Box(), "6 px") || !h.s.doc().FollowImage || !showsLabel(h.s.work.Box(), "0.70") {
		t.Errorf("restored strength %g feather %d grow %d follow %v, want 0.7, 4, 6 and the size following the image (and the section showing 0.70 and 6 px)",
			h.s.doc().Strength, h.s.doc().Feather, h.s.doc().Grow, h.s.doc().FollowImage)
	}
	// The canvas shows the dropped picture; Show puts the restored start image and mask back on it.
	test.Tap(findButton(t, h.s.work.Box(), "Show"))
	if !h.s.canvas.Editing || h.s.canvas.Editor.Mask() != h.s.doc().Start.Mask {
		t.Error("Show does not put the restored start image and mask on the canvas")
	}

	// Clicking the image in the history restores them too.
	h.s.work.RemoveStart()
	test.Tap(h.s.history.Thumbs()[0])
	if h.s.doc().Start == nil {
		t.Fatal("clicking the history image restored no start image")
	}
	sameNRGBA(t, "the start image restored from history", h.s.doc().Start.Image.Image, loaded)
	sameMask(t, "the mask restored from history", h.s.doc().Start.Mask.Image(), painted)
}
