package unfinished

import (
	"image"
	"testing"

	"easel/app/compose"
	"easel/app/settings"
)

// TestKeptJobKeepsTheCropOffset: a kept job that starts from an image cropped off its centre
// comes back from the store cropping at the same place.
func TestKeptJobKeepsTheCropOffset(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	img := image.NewNRGBA(image.Rect(0, 0, 128, 64))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 13)
	}
	d := compose.NewDraft(settings.Settings{})
	d.Prompt, d.Size, d.CustomW, d.CustomH, d.Steps = "a fox", compose.SizeExact, 32, 32, 3
	d.Start = &compose.Start{Name: "photo.png", SHA256: "ab", Image: img, CropOffset: image.Pt(40, 0)}
	if _, err := s.Add(d, 7, "a fox", ""); err != nil {
		t.Fatal(err)
	}
	kept, err := s.List()
	if err != nil || len(kept) != 1 {
		t.Fatalf("kept %d jobs (%v), want 1", len(kept), err)
	}
	if st := kept[0].Draft.Start; st == nil || st.CropOffset != image.Pt(40, 0) {
		t.Fatalf("the kept job's start image came back as %+v", st)
	}
	want, err := d.Job(7)
	if err != nil {
		t.Fatal(err)
	}
	got, err := kept[0].Draft.Job(7)
	if err != nil || string(got.Request.Init.Image.Pix) != string(want.Request.Init.Image.Pix) {
		t.Errorf("the kept job does not crop the start image where the draft did (%v)", err)
	}
}
