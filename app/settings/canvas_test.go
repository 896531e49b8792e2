package settings

import (
	"image"
	"image/color"
	"os"
	"path/filepath"
	"testing"
)

// TestCanvasKeptAcrossLaunches: the start image, its mask, the extension and the settings that
// go with them come back as they were saved, pixel for pixel.
func TestCanvasKeptAcrossLaunches(t *testing.T) {
	st := &DraftStore{Path: filepath.Join(t.TempDir(), "draft.json")}
	start := image.NewNRGBA(image.Rect(0, 0, 48, 32))
	for i := range start.Pix {
		start.Pix[i] = uint8(i * 7)
	}
	mask := image.NewGray(start.Rect)
	mask.SetGray(5, 6, color.Gray{Y: 255})
	d := Draft{Prompt: "a harbour", Size: "image", Steps: 20, CFG: 1,
		Canvas: &Canvas{Name: "pasted image 1", Extend: [4]int{0, 0, 64, 0}, Strength: 0.8, Feather: 4, Grow: 2, FollowImage: true}}
	if err := st.SaveCanvas(d.Canvas, start, mask); err != nil {
		t.Fatal(err)
	}
	if err := st.Save(d); err != nil {
		t.Fatal(err)
	}
	got, ok, err := st.Load()
	if err != nil || !ok || got.Canvas == nil {
		t.Fatalf("Load: %+v %v %v", got, ok, err)
	}
	if c := *got.Canvas; c.Name != "pasted image 1" || c.Extend != [4]int{0, 0, 64, 0} || c.Strength != 0.8 || c.Feather != 4 || c.Grow != 2 || !c.FollowImage {
		t.Errorf("canvas settings back as %+v", c)
	}
	s2, m2, err := st.LoadCanvas(*got.Canvas)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Rect != start.Rect || string(s2.Pix) != string(start.Pix) {
		t.Error("the start image came back different")
	}
	if m2 == nil || string(m2.Pix) != string(mask.Pix) {
		t.Error("the mask came back different")
	}
	// Back to text to image: the files go.
	if err := st.SaveCanvas(got.Canvas, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(st.Path), canvasStartFile)); !os.IsNotExist(err) {
		t.Errorf("the start image file stayed: %v", err)
	}
}

// TestCanvasDamagedFileSaysSo: a start image file that went away is an error naming what is lost.
func TestCanvasDamagedFileSaysSo(t *testing.T) {
	st := &DraftStore{Path: filepath.Join(t.TempDir(), "draft.json")}
	if _, _, err := st.LoadCanvas(Canvas{Name: "x", Start: canvasStartFile}); err == nil {
		t.Fatal("a missing start image file was read without an error")
	}
}
