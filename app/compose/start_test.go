package compose

import (
	"errors"
	"image"
	"testing"

	"easel/app/imagework"
	"easel/engine/pipeline"
)

func testStart(w, h int) *Start {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	return &Start{Name: "photo.png", SHA256: "ab", Image: img}
}

// TestJobFromAStartImage: the request starts from the prepared image at the size the run makes,
// with the default strength; an extension makes the canvas wider and the strength 1; a strength
// outside (0, 1] is refused as a setting.
func TestJobFromAStartImage(t *testing.T) {
	d := Draft{Prompt: "a boat", Size: SizeAuto, Steps: 8, CFG: 1, Start: testStart(100, 70)}
	j, err := d.Job(5)
	if err != nil {
		t.Fatal(err)
	}
	r := j.Request
	if r.Init == nil || r.Init.Strength != DefaultStrength || r.Width != 96 || r.Height != 64 || r.Init.Image.Rect.Dx() != 96 || r.Init.Mask != nil {
		t.Fatalf("request %dx%d init %+v", r.Width, r.Height, r.Init)
	}
	d.Start.Extend = imagework.Margins{Right: 64}
	d.Start.Mask = image.NewGray(image.Rect(0, 0, 100, 70))
	d.Start.Mask.Pix[0] = 255
	if j, err = d.Job(5); err != nil || j.Request.Width != 160 || j.Request.Init.Strength != 1 || j.Request.Init.Mask == nil {
		t.Fatalf("extended: %v, %dx%d, %+v", err, j.Request.Width, j.Request.Height, j.Request.Init)
	}
	d.Size, d.CustomW, d.CustomH = SizeExact, 64, 64
	if j, err = d.Job(5); err != nil || j.Request.Width != 64 || j.Request.Init.Image.Rect.Dx() != 64 {
		t.Fatalf("cover-crop to 64×64: %v, %+v", err, j.Request)
	}
	d.Start.Strength = 1.5
	if _, err := d.Job(5); !errors.Is(err, pipeline.ErrSettings) {
		t.Errorf("strength 1.5: %v, want ErrSettings", err)
	}
}

// TestStartRestoresFromTheFileSettings: what FileSettings records brings the start image, its
// mask and options back.
func TestStartRestoresFromTheFileSettings(t *testing.T) {
	d := Draft{Prompt: "a boat", Size: SizeAuto, Steps: 8, CFG: 1, Start: testStart(64, 64)}
	d.Start.Mask = image.NewGray(image.Rect(0, 0, 64, 64))
	d.Start.Mask.Pix[10] = 255
	d.Start.Strength, d.Start.MaskBlur, d.Start.MaskGrow = 0.7, 3, 5
	s := d.FileSettings(&pipeline.Result{Width: 64, Height: 64, Steps: 8, CFG: 1, Seed: 5})
	if s.Init == nil || s.Init.Strength != 0.7 || s.Init.Mask == nil || s.InitImage == nil || s.MaskImage == nil || s.Init.Fit != "" {
		t.Fatalf("file settings %+v", s.Init)
	}
	var back Draft
	back.Restore(s)
	if back.Start == nil || back.Start.Strength != 0.7 || back.Start.MaskGrow != 5 || back.Start.Mask.Pix[10] != 255 || back.Size != SizeFromImage {
		t.Fatalf("restored %+v, size mode %v", back.Start, back.Size)
	}
	if j, err := back.Job(5); err != nil || j.Request.Width != 64 || j.Request.Init == nil {
		t.Errorf("the restored draft runs as %+v, %v", j.Request, err)
	}
}

// TestJobCropsAtTheOffset: a start image cropped to a chosen size is cropped at the start's crop
// offset (clamped inside the image), and the PNG's settings bring the offset back.
func TestJobCropsAtTheOffset(t *testing.T) {
	d := Draft{Prompt: "a boat", Size: SizeCustom, CustomW: 256, CustomH: 256, Steps: 8, CFG: 1, Start: testStart(512, 280)}
	d.Start.CropOffset = image.Pt(500, 0) // clamped: the 280×280 crop at the right edge, x 232
	j, err := d.Job(5)
	if err != nil {
		t.Fatal(err)
	}
	want := imagework.FitAt(d.Start.Image, 256, 256, image.Pt(116, 0)) // 116 is all the room there is
	if got := j.Request.Init.Image; string(got.Pix) != string(want.Pix) {
		t.Error("the init image is not the crop at the image's right edge")
	}
	if centred := imagework.Fit(d.Start.Image, 256, 256); string(j.Request.Init.Image.Pix) == string(centred.Pix) {
		t.Error("the offset crop made the centred crop's pixels")
	}
	s := d.FileSettings(&pipeline.Result{Width: 256, Height: 256, Steps: 8, CFG: 1, Seed: 5})
	if s.Init.CropOffset != [2]int{500, 0} || s.Init.Fit != "cover" {
		t.Fatalf("recorded %+v", s.Init)
	}
	var back Draft
	back.Restore(s)
	if back.Start == nil || back.Start.CropOffset != image.Pt(500, 0) {
		t.Fatalf("restored start %+v", back.Start)
	}
	if j2, err := back.Job(5); err != nil || string(j2.Request.Init.Image.Pix) != string(j.Request.Init.Image.Pix) {
		t.Errorf("the restored draft does not crop at the same place (%v)", err)
	}
}
