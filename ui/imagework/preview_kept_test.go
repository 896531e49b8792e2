package imagework

import (
	"context"
	"image"
	"image/color"
	"testing"

	"easel/app/compose"
	"easel/app/jobs"
	"easel/engine/pipeline"

	"easel/ui/kit"
)

func filled(w, h int, c color.NRGBA) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	return img
}

// A preview of a masked run shows the original where the mask keeps and the preview where it
// repaints, at the preview's own (smaller) size; a run without a mask keeps nothing.
func TestPreviewShowsTheKeptAreaAsTheOriginal(t *testing.T) {
	red, blue := color.NRGBA{200, 10, 10, 255}, color.NRGBA{10, 10, 200, 255}
	mask := image.NewGray(image.Rect(0, 0, 256, 128))
	for y := range 128 {
		for x := range 128 { // the left half repaints
			mask.Pix[y*256+x] = 255
		}
	}
	req := pipeline.Request{Width: 256, Height: 128, Init: &pipeline.InitImage{Image: filled(256, 128, red), Strength: 0.6, Mask: mask}}
	var areas PreviewAreas
	u := jobs.Update{Job: jobs.Job{Request: req, State: jobs.Running}, Event: &pipeline.Event{}}
	k := areas.Of(u)
	if k == nil {
		t.Fatal("a masked run has no kept area")
	}
	// The fast preview is one pixel per latent (16×8), shown 4× larger.
	got := k.Over(kit.UpscaleNearest(filled(16, 8, blue), 4))
	if b := got.Bounds(); b.Dx() != 64 || b.Dy() != 32 {
		t.Fatalf("preview %v", b)
	}
	if c := got.NRGBAAt(5, 10); c != blue {
		t.Errorf("inside the mask the preview shows %v, want the preview's %v", c, blue)
	}
	if c := got.NRGBAAt(60, 10); c != red {
		t.Errorf("outside the mask the preview shows %v, want the original's %v", c, red)
	}
	if areas.Of(u) != k {
		t.Error("the kept area is made again for every step")
	}
	done := jobs.Update{Job: jobs.Job{Request: req, State: jobs.Done}}
	if areas.Of(done) != nil || len(areas.areas) != 0 {
		t.Error("a finished job's kept area is still held")
	}
	req.Init.Mask = nil
	if areas.Of(jobs.Update{Job: jobs.Job{Request: req, State: jobs.Running}, Event: &pipeline.Event{}}) != nil {
		t.Error("a run without a mask keeps an area")
	}
}

// Every image of a batch run from a start image is pasted back, not only the first.
func TestFinishingPastesBackEveryBatchImage(t *testing.T) {
	red, blue := color.NRGBA{200, 10, 10, 255}, color.NRGBA{10, 10, 200, 255}
	start := filled(64, 64, red)
	mask := image.NewGray(start.Rect)
	for i := range 32 * 64 { // the top half repaints
		mask.Pix[i] = 255
	}
	d := compose.Draft{Prompt: "a kite", Size: compose.SizeFromImage, Steps: 4, CFG: 1,
		Start: &compose.Start{Name: "start.png", Image: start, Strength: 0.6, Mask: mask}}
	job, err := d.Job(1)
	if err != nil {
		t.Fatal(err)
	}
	gen := jobs.GeneratorFunc(func(_ context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
		close(events)
		first := &pipeline.Result{Image: filled(req.Width, req.Height, blue)}
		second := &pipeline.Result{Image: filled(req.Width, req.Height, blue), Index: 1}
		first.Batch = []*pipeline.Result{first, second}
		return first, nil
	})
	f := &Finishing{Generator: gen}
	f.Expect(job.Request.Init, &job)
	res, err := f.Run(context.Background(), job.Request, make(chan pipeline.Event, 1))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res.Batch {
		if c := r.Image.NRGBAAt(5, 60); c != red {
			t.Errorf("batch image %d keeps %v at the bottom, want the start image's %v", i, c, red)
		}
		if c := r.Image.NRGBAAt(5, 2); c != blue {
			t.Errorf("batch image %d has %v at the top, want the generated %v", i, c, blue)
		}
	}
}
