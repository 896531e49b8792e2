package model

import (
	"image"
	"image/color"
	"testing"

	"easel/app/compose"
	"easel/app/imagework"
	"easel/app/settings"
)

func condition(w, h int) compose.Condition {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	return compose.Condition{Name: "photo.png", Image: img, SHA256: "abc"}
}

// TestCanvasActionsTellTheirObservers: each named action changes the document and tells the
// canvas's observers once, and none of the others.
func TestCanvasActionsTellTheirObservers(t *testing.T) {
	w := New(compose.Draft{})
	var canvas, notices int
	w.Observe(CanvasChanged, func(Change) { canvas++ })
	stop := w.Observe(NoticeChanged, func(Change) { notices++ })

	w.SetStart(condition(300, 200))
	if c := w.Canvas(); c.Start == nil || c.Start.Mask == nil || c.Strength != DefaultStrength || c.Feather != DefaultFeather {
		t.Fatalf("after SetStart: %+v", c)
	}
	w.SetExtend([4]int{0, 0, 64, -5})
	if got := w.Canvas().Extend; got != [4]int{0, 0, 64, 0} {
		t.Errorf("SetExtend kept %v (a negative side is none)", got)
	}
	w.SetStrength(2)
	w.SetFeather(-1)
	w.SetGrow(6)
	w.SetFollowImage(true)
	w.MaskEdited()
	if c := w.Canvas(); c.Strength != 1 || c.Feather != 0 || c.Grow != 6 || !c.FollowImage {
		t.Errorf("settings kept as %+v", c)
	}
	if canvas != 7 || notices != 0 {
		t.Errorf("observers told %d (canvas) and %d (notices) times, want 7 and 0", canvas, notices)
	}
	w.SetStart(condition(100, 100))
	if c := w.Canvas(); c.Extend != [4]int{} || c.Strength != 1 || !c.FollowImage {
		t.Errorf("a new start image: the extension goes, the settings stay: %+v", c)
	}
	w.RemoveStart()
	if w.Canvas().Start != nil {
		t.Error("RemoveStart left the start image")
	}
	stop()
	w.Say(NoticeInfo, "x")
	if notices != 0 {
		t.Error("a stopped observer was told")
	}
}

// TestFrameFollowsPrepare: the frame the canvas draws is the crop and size imagework.Prepare makes
// from the same start image, extension and chosen size.
func TestFrameFollowsPrepare(t *testing.T) {
	cases := []struct {
		name       string
		w, h       int
		ext        [4]int
		follow     bool
		chosenW    int
		chosenH    int
		wantW      int
		wantH      int
		wantCropDx int
		wantCropDy int
	}{
		{"cover crop to a square", 300, 200, [4]int{}, false, 256, 256, 256, 256, 200, 200},
		{"cover crop to a wide size", 300, 300, [4]int{}, false, 832, 512, 832, 512, 300, 185},
		{"follows the image", 300, 200, [4]int{}, true, 256, 256, 288, 192, 300, 200},
		{"extended: follows the grown canvas", 256, 256, [4]int{0, 0, 64, 0}, false, 1024, 1024, 320, 256, 320, 256},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := New(compose.Draft{})
			start := condition(tc.w, tc.h)
			w.SetStart(start)
			w.SetExtend(tc.ext)
			w.SetFollowImage(tc.follow)
			f, ok := w.Canvas().Frame(tc.chosenW, tc.chosenH)
			if !ok {
				t.Fatal("no frame with a start image")
			}
			if f.Width != tc.wantW || f.Height != tc.wantH || f.Crop.Dx() != tc.wantCropDx || f.Crop.Dy() != tc.wantCropDy {
				t.Fatalf("frame %+v, want %d×%d cropping %d×%d", f, tc.wantW, tc.wantH, tc.wantCropDx, tc.wantCropDy)
			}
			// The output size is Prepare's for the same request.
			o := imagework.Options{Extend: imagework.Margins{Left: tc.ext[0], Top: tc.ext[1], Right: tc.ext[2], Bottom: tc.ext[3]}}
			if !w.Canvas().Follows() {
				o.Width, o.Height = tc.chosenW, tc.chosenH
			}
			p, err := imagework.Prepare(start.Image, o)
			if err != nil {
				t.Fatal(err)
			}
			if p.Width != f.Width || p.Height != f.Height {
				t.Errorf("Prepare makes %d×%d, the frame says %d×%d", p.Width, p.Height, f.Width, f.Height)
			}
		})
	}
	if _, ok := New(compose.Draft{}).Canvas().Frame(512, 512); ok {
		t.Error("a frame without a start image")
	}
}

// TestCanvasSavedAndResumed: the document written for the next launch comes back as it was.
func TestCanvasSavedAndResumed(t *testing.T) {
	w := New(compose.Draft{})
	w.SetStart(condition(96, 64))
	w.SetExtend([4]int{32, 0, 0, 0})
	w.SetStrength(0.8)
	w.SetGrow(3)
	w.Canvas().Start.Mask.Image().SetGray(4, 4, color.Gray{Y: 255})
	st := &settings.DraftStore{Path: t.TempDir() + "/draft.json"}
	saved := w.Canvas().Saved()
	if err := st.SaveCanvas(saved, w.Canvas().Start.Image.Image, w.Canvas().Start.Mask.Image()); err != nil {
		t.Fatal(err)
	}
	img, mask, err := st.LoadCanvas(*saved)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Resumed(*saved, img, mask)
	if err != nil {
		t.Fatal(err)
	}
	want := w.Canvas()
	if c.Start.Image.Name != want.Start.Image.Name || c.Start.Image.SHA256 != "abc" || c.Extend != want.Extend || c.Strength != 0.8 || c.Grow != 3 || c.Feather != DefaultFeather {
		t.Errorf("resumed %+v, want %+v", c, want)
	}
	if string(c.Start.Image.Image.Pix) != string(want.Start.Image.Image.Pix) || string(c.Start.Mask.Image().Pix) != string(want.Start.Mask.Image().Pix) {
		t.Error("the start image or mask came back different")
	}
	if c.Start.Image.EncodedW == 0 {
		t.Error("the resumed start image has no encoded size")
	}
	if New(compose.Draft{}).Canvas().Saved() != nil {
		t.Error("a text-to-image canvas saved a start image")
	}
}
