package ui

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"easel/app/hires"

	"easel/ui/gallery"
)

// TestBatchFillsTheSheetThenVaryUpscaleAndRestore: a batch of 4 fills the contact sheet image by
// image (each cell its live preview, then its picture, saved); Upscale ×2 on one runs a second
// pass at twice the size from it; Vary on another makes a batch of variations around its seed;
// restoring one from history brings back its own seed.
func TestBatchFillsTheSheetThenVaryUpscaleAndRestore(t *testing.T) {
	h := newHarness(t, 0)
	s := h.s
	s.model.SetCustomSize(256, 256)
	s.model.SetRandomSeed(false)
	s.model.SetSeed(7)
	s.options.Count.SetText("4")
	if s.draft().Count != 4 {
		t.Fatalf("the Images field set a batch of %d", s.draft().Count)
	}
	test.Tap(s.generateBtn)
	req := <-h.gen.started
	if req.Count != 4 || req.Seed != 7 {
		t.Fatalf("submitted a batch of %d from seed %d", req.Count, req.Seed)
	}
	sheet := s.sheet
	// The first image's steps: its cell shows the live preview, the others wait.
	for range fakeSteps {
		h.gen.step <- struct{}{}
	}
	h.pump("the first image finished and saved", func() bool { c := sheet.Cell(0); return c != nil && c.State == gallery.CellDone && c.Path != "" })
	if !sheet.Box.Visible() || len(sheet.Cells()) != 4 || sheet.Cell(1).State != gallery.CellWaiting || sheet.Cell(0).Seed != 7 || sheet.Cell(3).Seed != 10 {
		t.Fatalf("after one image: %d cells, second %v", len(sheet.Cells()), sheet.Cell(1).State)
	}
	h.gen.step <- struct{}{}
	h.pump("the second image's preview", func() bool { return sheet.Cell(1).State == gallery.CellRunning })
	for range 3*fakeSteps - 1 {
		h.gen.step <- struct{}{}
	}
	h.pump("the batch finished and saved", func() bool {
		for _, c := range sheet.Cells() {
			if c.Path == "" {
				return false
			}
		}
		return s.model.Current() == 0
	})
	if sheet.Done() != 4 || len(s.history.Entries) != 4 {
		t.Fatalf("%d finished, %d in history", sheet.Done(), len(s.history.Entries))
	}

	// Upscale ×2 the third image: a second pass from it at 512².
	test.Tap(sheet.Cell(2))
	if s.actions.Shown() != sheet.Cell(2).Path {
		t.Errorf("the canvas shows %q, not the chosen image", s.actions.Shown())
	}
	test.Tap(sheet.Button("Upscale ×2"))
	// The offer comes first: size, the steps it runs, whether it fits; nothing starts before
	// the confirm.
	offer := h.w.Canvas().Overlays().Top()
	if offer == nil || s.offer == nil {
		t.Fatal("Upscale ×2 started without its offer")
	}
	steps := hires.Steps(s.batch.Draft().Steps, hires.DefaultStrength) // what the pass runs
	if text := s.offerText; !strings.Contains(text, "512×512") || !strings.Contains(text, fmt.Sprintf("%d steps", steps)) || !strings.Contains(text, "fits") {
		t.Errorf("the offer says %s", text)
	}
	select {
	case <-h.gen.started:
		t.Fatal("the upscale started before the confirm")
	default:
	}
	test.Tap(findButton(t, offer, "Upscale ×2"))
	up := <-h.gen.started
	if up.Count > 1 || up.Init == nil || up.Init.Strength != hires.DefaultStrength || up.Width != 512 || up.Height != 512 || up.Seed != 9 {
		t.Fatalf("upscale request: count %d, init %+v, %d×%d, seed %d", up.Count, up.Init, up.Width, up.Height, up.Seed)
	}
	if sheet.Plan() == "" {
		t.Error("the upscale offer says nothing about memory and time")
	}
	for range fakeSteps {
		h.gen.step <- struct{}{}
	}
	h.gen.release <- struct{}{}
	h.pump("the upscaled image saved", func() bool { return s.model.Current() == 0 && len(s.history.Entries) == 5 })
	// Its PNG records the source file and its hash, and A1111's Hires fields; the queue row said
	// what it was.
	upSet := s.history.Entries[0].Settings
	if upSet.Init == nil || upSet.Init.Image.Name != filepath.Base(sheet.Cell(2).Path) || len(upSet.Init.Image.SHA256) != 64 ||
		upSet.Hires == nil || upSet.Hires.Factor != 2 || upSet.Hires.Upscaler != "Lanczos" {
		t.Errorf("the upscaled PNG records init %+v, hires %+v", upSet.Init, upSet.Hires)
	}
	if q := queueText(h); !strings.Contains(q, "Upscale ×2 · ") {
		t.Errorf("the queue does not say Upscale ×2:\n%s", q)
	}

	// Vary the first image: variations around seed 7.
	test.Tap(sheet.Cell(0))
	test.Tap(sheet.Button("Vary"))
	vary := <-h.gen.started
	if vary.Count != 4 || vary.Seed != 7 || vary.VariationStrength != 0.2 {
		t.Fatalf("vary request: count %d, seed %d, strength %g", vary.Count, vary.Seed, vary.VariationStrength)
	}
	h.gen.step <- struct{}{}
	h.pump("the variations' sheet", func() bool {
		return sheet.Cell(0) != nil && sheet.Cell(0).Varies && sheet.Cell(0).State == gallery.CellRunning
	})
	if sheet.Cell(1).Variation != vary.VariationSeed+1 {
		t.Errorf("variation cell 2 has variation seed %d, want %d", sheet.Cell(1).Variation, vary.VariationSeed+1)
	}
	s.cancelCurrent()
	h.pump("the variations cancelled", func() bool { return s.model.Current() == 0 && sheet.Cell(3).State == gallery.CellFailed })

	// The variations opened beside the batch: the batch is a tab away, its images as they were,
	// and a second Vary from one of them opens a third tab from the batch's own seed.
	if names, sel := sheet.Tabs(); len(names) != 2 || names[0] != "Batch" || names[1] != "Vary 1" || sel != 1 {
		t.Fatalf("after Vary the sheet has tabs %q, %d selected (want Batch and Vary 1, the variations shown)", names, sel)
	}
	sheet.SelectTab(0)
	if !strings.HasPrefix(sheet.Title(), jobLabel(req.Prompt, 7)+" — 4 of 4 finished") {
		t.Errorf("the Batch tab's title: %q", sheet.Title())
	}
	batch := sheet.GroupCells(0)
	for i, c := range batch {
		if c.Varies || c.Seed != uint64(7+i) || c.State != gallery.CellDone || c.Path == "" {
			t.Errorf("the batch's image %d after Vary: seed %d, varies %v, %v, saved as %q", i+1, c.Seed, c.Varies, c.State, c.Path)
		}
	}
	test.Tap(batch[2])
	if sheet.Button("Vary").Disabled() {
		t.Fatal("Vary is off for the batch's third image")
	}
	test.Tap(sheet.Button("Vary"))
	again := <-h.gen.started
	if again.Seed != 9 || again.VariationStrength != 0.2 {
		t.Errorf("Vary from the Batch tab: seed %d, strength %g; want the third image's seed 9", again.Seed, again.VariationStrength)
	}
	h.gen.step <- struct{}{}
	h.pump("the second variations' tab", func() bool { names, _ := sheet.Tabs(); return len(names) == 3 })
	if names, _ := sheet.Tabs(); names[0] != "Batch" || names[2] != "Vary 2" || sheet.Cell(0).Seed != 9 || !sheet.Cell(0).Varies {
		t.Errorf("tabs %q; the new tab's first cell seed %d", names, sheet.Cell(0).Seed)
	}
	s.cancelCurrent()
	h.pump("the second variations cancelled", func() bool { return s.model.Current() == 0 && sheet.Cell(3).State == gallery.CellFailed })

	// Restore the batch's fourth image from history: its own seed.
	var fourth = -1
	for i, e := range s.history.Entries {
		if e.Settings != nil && e.Settings.Seed == 10 {
			fourth = i
		}
	}
	if fourth < 0 {
		t.Fatal("the fourth image is not in history")
	}
	s.model.SetSeed(0)
	s.restore(s.history.Entries[fourth])
	if s.draft().Seed != 10 || s.draft().RandomSeed || s.draft().VariationStrength != 0 {
		t.Errorf("restored seed %d (random %v, variation %g), want 10", s.draft().Seed, s.draft().RandomSeed, s.draft().VariationStrength)
	}
}
