package imagefile

import (
	"image"
	"image/color"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartImageAndMaskRoundTrip: an image made from a start image keeps its settings, the start
// image and the mask in the file, and A1111's parameters name the strength and the mask blur.
func TestStartImageAndMaskRoundTrip(t *testing.T) {
	init := image.NewNRGBA(image.Rect(0, 0, 40, 30))
	for i := range init.Pix {
		init.Pix[i] = uint8(i * 7)
	}
	init.SetNRGBA(3, 4, color.NRGBA{10, 20, 30, 40}) // a translucent pixel survives
	mask := image.NewGray(image.Rect(0, 0, 40, 30))
	mask.SetGray(5, 6, color.Gray{200})
	s := &Settings{Prompt: "a boat", Width: 64, Height: 32, Steps: 8, CFG: 1, Seed: 3, Sampler: "Euler", Model: "m.cmf",
		Init: &InitSettings{Image: ImageRef{Name: "photo.jpg", SHA256: strings.Repeat("a", 64)}, Strength: 0.6,
			Mask: &ImageRef{Name: "mask.png", SHA256: strings.Repeat("b", 64)}, MaskBlur: 4, MaskGrow: 8, KeepOriginal: true, Extend: [4]int{0, 0, 24, 0}, Fit: "cover", CropOffset: [2]int{-12, 5}},
		InitImage: init, MaskImage: mask}
	path := filepath.Join(t.TempDir(), "out.png")
	if err := WriteFile(path, image.NewNRGBA(image.Rect(0, 0, 64, 32)), s); err != nil {
		t.Fatal(err)
	}
	m, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := m.Settings
	if got == nil || got.Init == nil || *got.Init.Mask != *s.Init.Mask || got.Init.Strength != 0.6 || got.Init.Extend != s.Init.Extend || got.Init.CropOffset != s.Init.CropOffset || !got.Init.KeepOriginal || got.Init.Fit != "cover" {
		t.Fatalf("init settings read back as %+v", got.Init)
	}
	if got.InitImage == nil || got.InitImage.Rect != init.Rect || string(got.InitImage.Pix) != string(init.Pix) {
		t.Error("the start image did not come back pixel for pixel")
	}
	if got.MaskImage == nil || string(got.MaskImage.Pix) != string(mask.Pix) {
		t.Error("the mask did not come back pixel for pixel")
	}
	if !strings.Contains(m.Parameters, "Denoising strength: 0.6") || !strings.Contains(m.Parameters, "Mask blur: 4") {
		t.Errorf("parameters %q lack the denoising strength or the mask blur", m.Parameters)
	}
	if !strings.Contains(m.Text[KeyEasel], `"crop_offset":[-12,5]`) {
		t.Errorf("the settings %s do not record the crop offset as crop_offset", m.Text[KeyEasel])
	}
	// A centred crop records no offset, so the settings read as before the field existed.
	s.Init.CropOffset = [2]int{}
	if err := WriteFile(path, image.NewNRGBA(image.Rect(0, 0, 64, 32)), s); err != nil {
		t.Fatal(err)
	}
	if m, err = ReadFile(path); err != nil || strings.Contains(m.Text[KeyEasel], "crop_offset") || m.Settings.Init.CropOffset != [2]int{} {
		t.Errorf("a centred crop was recorded as %s (%v)", m.Text[KeyEasel], err)
	}
}
