package history

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"easel/app/imagefile"
)

func testImage(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	return img
}

// A saved image carries its settings; the session lists it first, and a later Scan of the
// folder finds the PNGs from before the session with theirs (and a foreign PNG without).
func TestSaveSessionAndScan(t *testing.T) {
	dir := t.TempDir()
	old := New(dir)
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	if _, err := old.Save(testImage(200, 100), &imagefile.Settings{Prompt: "an old fox", Seed: 7, Width: 200, Height: 100, Steps: 4, CFG: 1}, t0); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "from-elsewhere.png"))
	if err != nil {
		t.Fatal(err)
	}
	png.Encode(f, testImage(10, 10))
	f.Close()
	os.WriteFile(filepath.Join(dir, "broken.png"), []byte("not a png"), 0o644)

	s := New(dir)
	e, err := s.Save(testImage(64, 128), &imagefile.Settings{Prompt: "a new owl", Seed: 9, Width: 64, Height: 128, Steps: 8, CFG: 4}, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Session(); len(got) != 1 || got[0].Path != e.Path || got[0].Settings.Prompt != "a new owl" {
		t.Fatalf("session %+v, want the new owl", got)
	}
	if b := e.Thumb.Bounds(); b.Dx() != ThumbSide/2 || b.Dy() != ThumbSide {
		t.Errorf("thumbnail %v, want %d×%d", b, ThumbSide/2, ThumbSide)
	}
	entries, errs := s.Scan()
	if len(errs) != 1 {
		t.Errorf("errors %v, want one for broken.png", errs)
	}
	var fox, foreign bool
	for _, x := range entries {
		if x.Path == e.Path {
			t.Error("Scan lists a session image twice")
		}
		if x.Settings != nil && x.Settings.Prompt == "an old fox" && x.Settings.Seed == 7 {
			fox = true
		}
		if filepath.Base(x.Path) == "from-elsewhere.png" && x.Settings == nil {
			foreign = true
		}
	}
	if !fox || !foreign {
		t.Errorf("scan %+v: want the old fox with its settings and the foreign PNG without", entries)
	}
	// Two images in the same second get distinct names.
	e2, err := s.Save(testImage(8, 8), &imagefile.Settings{Prompt: "x", Seed: 9, Width: 8, Height: 8, Steps: 1, CFG: 1}, t0.Add(time.Hour))
	if err != nil || e2.Path == e.Path {
		t.Errorf("second save in the same second: %v, path %s", err, e2.Path)
	}
}

func TestMissingFolderIsAnEmptyHistory(t *testing.T) {
	entries, errs := New(filepath.Join(t.TempDir(), "none")).Scan()
	if len(entries) != 0 || len(errs) != 0 {
		t.Errorf("got %v, %v", entries, errs)
	}
}

func TestThumbnailAveragesAndKeepsAlpha(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 4, 2))
	for x := range 4 {
		for y := range 2 {
			img.SetNRGBA(x, y, color.NRGBA{uint8(100 * (x % 2)), 0, 0, 128})
		}
	}
	th := Thumbnail(img, 2).(*image.NRGBA)
	if c := th.NRGBAAt(0, 0); c.R != 50 || c.A != 128 {
		t.Errorf("thumbnail pixel %v, want red 50 alpha 128", c)
	}
}
