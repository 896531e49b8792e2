package compose

import (
	"bytes"
	"errors"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/settings"
	"easel/engine/pipeline"
)

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewNRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestTransparencyWordingRoundTrips(t *testing.T) {
	for _, desc := range []string{"a glass teapot", "a glass teapot.", "  a fox, watercolour  "} {
		p := WithTransparency(desc)
		if !strings.HasPrefix(p, "This is an RGBA image with transparency. ") || !strings.HasSuffix(p, ". The image has alpha channel and the background is transparent.") {
			t.Errorf("%q → %q lacks Qwen's wording", desc, p)
		}
		if strings.Contains(p, "..") {
			t.Errorf("%q → %q doubles a full stop", desc, p)
		}
		back, ok := WithoutTransparency(p)
		if !ok || back != strings.TrimRight(strings.TrimSpace(desc), ". ") {
			t.Errorf("%q → %q → %q, %v", desc, p, back, ok)
		}
	}
	if _, ok := WithoutTransparency("a plain prompt"); ok {
		t.Error("a plain prompt read as transparent")
	}
}

func TestPresetAndCustomSizes(t *testing.T) {
	cases := []struct {
		aspect string
		scale  Scale
		w, h   int
	}{
		{"1:1", Scale1K, 1024, 1024},
		{"16:9", Scale1K, 1376, 768},
		{"9:16", Scale1K, 768, 1376},
		{"4:3", Scale2K, 2400, 1792},
		{"16:9", Scale2K, 2752, 1536},
	}
	for _, c := range cases {
		a, err := AspectByName(c.aspect)
		if err != nil {
			t.Fatal(err)
		}
		if w, h := PresetSize(a, c.scale); w != c.w || h != c.h {
			t.Errorf("%s at scale %d: %d×%d, want %d×%d", c.aspect, c.scale, w, h, c.w, c.h)
		}
	}
	for in, want := range map[int]int{1000: 992, 1010: 1024, 17: MinSide, 9000: MaxSide, 1024: 1024} {
		if got := Snap(in); got != want {
			t.Errorf("Snap(%d) = %d, want %d", in, got, want)
		}
	}
}

// Ten images are accepted in order, the eleventh refused with a message; move and remove keep
// the order an artist expects; the "from the last image" size follows the last one.
func TestConditionsLimitOrderAndSize(t *testing.T) {
	d := NewDraft(settings.Defaults())
	for i := range MaxConditions {
		c, err := NewCondition(string(rune('a'+i))+".png", pngBytes(t, 64*(i+1), 64))
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Add(c); err != nil {
			t.Fatalf("image %d refused: %v", i+1, err)
		}
	}
	c, _ := NewCondition("k.png", pngBytes(t, 8, 8))
	if err := d.Add(c); !errors.Is(err, ErrTooMany) || !strings.Contains(err.Error(), "k.png") {
		t.Errorf("eleventh image: %v, want ErrTooMany naming it", err)
	}
	d.Move(0, +1)
	d.Move(0, -1) // no-op at the left end
	d.Remove(2)
	names := ""
	for _, c := range d.Conditions {
		names += c.Name[:1]
	}
	if names != "badefghij" {
		t.Errorf("order %q, want badefghij", names)
	}
	if c := d.Conditions[0]; c.EncodedW != 1440 || c.EncodedH != 736 {
		t.Errorf("a 128×64 image encodes at %d×%d, want calculate_dimensions(1024², 2) = 1440×736", c.EncodedW, c.EncodedH)
	}
	d.Size = SizeFromImage
	w, h, err := d.OutputSize()
	last := d.Conditions[len(d.Conditions)-1]
	if err != nil || w != last.EncodedW || h != last.EncodedH {
		t.Errorf("from last image: %d×%d (%v), want the last image's %d×%d", w, h, err, last.EncodedW, last.EncodedH)
	}
}

func TestUnreadableFilesSayWhy(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "notes.png")
	os.WriteFile(bad, []byte("this is not an image"), 0o644)
	for _, path := range []string{bad, filepath.Join(dir, "missing.png"), dir} {
		if _, err := LoadCondition(path); err == nil || !strings.Contains(err.Error(), filepath.Base(path)) {
			t.Errorf("%s: %v, want an error naming the file", path, err)
		}
	}
}

// With CFG off the negative prompt is not sent; the request carries size, steps, seed and images.
func TestRequestAndRestore(t *testing.T) {
	d := NewDraft(settings.Defaults())
	d.Prompt, d.Negative, d.Transparent = "a paper crane", "blurry", true
	d.Size, d.Aspect, d.Scale = SizePreset, Aspects[5], Scale1K
	d.Steps, d.CFG = 12, 1
	r, err := d.Request(42)
	if err != nil {
		t.Fatal(err)
	}
	if r.NegativePrompt != "" || r.CFG != 1 || r.Width != 1376 || r.Height != 768 || r.Seed != 42 || r.Steps != 12 {
		t.Errorf("request %+v", r)
	}
	d.CFG = 4
	r, _ = d.Request(42)
	if r.NegativePrompt != "blurry" {
		t.Errorf("with CFG 4 the negative prompt is %q", r.NegativePrompt)
	}
	s := d.FileSettings(&pipeline.Result{Width: 1376, Height: 768, Steps: 12, CFG: 4, Seed: 42})
	var e Draft
	e.Restore(s)
	if e.Prompt != "a paper crane" || !e.Transparent || e.Negative != "blurry" || e.Seed != 42 || e.RandomSeed ||
		e.Size != SizePreset || e.Aspect.Name != "16:9" || e.Scale != Scale1K || e.Steps != 12 || e.CFG != 4 {
		t.Errorf("restored %+v", e)
	}
}
