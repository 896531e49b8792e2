package imagefile

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testImage is an RGBA image with transparent, half-transparent and opaque pixels.
func testImage() *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, 7, 5))
	for y := range 5 {
		for x := range 7 {
			img.SetNRGBA(x, y, color.NRGBA{uint8(30 * x), uint8(50 * y), uint8(x * y), uint8(60 * (x % 5))})
		}
	}
	return img
}

func testSettings(prompt, neg string) *Settings {
	return &Settings{
		Prompt: prompt, NegativePrompt: neg, Width: 96, Height: 64, Steps: 4, CFG: 3.5, Seed: 11,
		Sigmas: []float32{1, 0.75, 0.5, 0.02, 0}, Resolution: 128, Sampler: "Euler",
		Model: "tiny.cmf", ModelHash: "0123456789", Images: []ImageRef{{Name: "花.png", SHA256: strings.Repeat("ab", 32)}},
		LoRAs:        []LoRARef{{Name: "turbo.safetensors", SHA256: strings.Repeat("cd", 32), ShortHash: "0123456789ab", Strength: 0.75}},
		EaselVersion: "0.1.0", Backend: "cpu/openblas",
	}
}

// chunkTypes lists a PNG's chunks with their keywords for text chunks.
func chunkTypes(t *testing.T, data []byte) []string {
	t.Helper()
	var out []string
	for off := 8; off+8 <= len(data); {
		n := int(binary.BigEndian.Uint32(data[off:]))
		typ := string(data[off+4 : off+8])
		if typ == "tEXt" || typ == "iTXt" {
			key, _, _ := bytes.Cut(data[off+8:off+8+n], []byte{0})
			typ += ":" + string(key)
		}
		out = append(out, typ)
		off += 12 + n
	}
	return out
}

// TestRoundTrip writes Latin-1 and CJK prompts, reads the settings back unchanged, checks the
// chunk kinds and their place before the pixels, and that image/png decodes the same pixels.
func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name, prompt, neg, paramsChunk string
	}{
		{"latin", "A capybara wearing a wizard hat, oil painting, café", "blurry, low quality", "tEXt:parameters"},
		{"cjk", "一只戴着巫师帽的水豚", "模糊，低质量", "iTXt:parameters"},
		{"empty negative", " ", "", "tEXt:parameters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.png")
			s := testSettings(tc.prompt, tc.neg)
			img := testImage()
			if err := WriteFile(path, img, s); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			types := chunkTypes(t, data)
			if want := []string{"IHDR", tc.paramsChunk, "iTXt:easel", "IDAT"}; !reflect.DeepEqual(types[:4], want) {
				t.Errorf("chunks %v, want them to start %v", types, want)
			}
			m, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m.Settings, s) {
				t.Errorf("settings read back\n%+v\nwant\n%+v", m.Settings, s)
			}
			if m.Parameters != Parameters(s) || !strings.HasPrefix(m.Parameters, tc.prompt) {
				t.Errorf("parameters read back %q, want %q", m.Parameters, Parameters(s))
			}
			if m.Width != 7 || m.Height != 5 {
				t.Errorf("size %d×%d, want 7×5", m.Width, m.Height)
			}
			dec, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("image/png cannot decode the file: %v", err)
			}
			got, ok := dec.(*image.NRGBA)
			if !ok || !bytes.Equal(got.Pix, img.Pix) {
				t.Errorf("decoded %T, pixels equal %v: want the NRGBA pixels back exactly", dec, ok && bytes.Equal(got.Pix, img.Pix))
			}
			entries, _ := os.ReadDir(filepath.Dir(path))
			if len(entries) != 1 {
				t.Errorf("the folder holds %d files, want only the image", len(entries))
			}
		})
	}
}

// TestParameters: the A1111 text, exactly, and values with separators quoted.
func TestParameters(t *testing.T) {
	s := testSettings("a cat\non two lines", "dog")
	want := "a cat\non two lines <lora:turbo:0.75>\nNegative prompt: dog\nSteps: 4, Sampler: Euler, CFG scale: 3.5, Seed: 11, Size: 96x64, Model hash: 0123456789, Model: tiny.cmf, Lora hashes: \"turbo: 0123456789ab\", Version: Easel 0.1.0"
	if got := Parameters(s); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	s.NegativePrompt, s.Model, s.ModelHash, s.EaselVersion, s.LoRAs = "", "qwen, q8: <best>", "", "", nil
	want = "a cat\non two lines\nSteps: 4, Sampler: Euler, CFG scale: 3.5, Seed: 11, Size: 96x64, Model: \"qwen, q8: <best>\""
	if got := Parameters(s); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestWriteFailures: a full disk, a missing folder and an unwritable folder give errors that say
// so, leave no temporary file behind, and never touch an existing file at the destination.
func TestWriteFailures(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keep.png")
	if err := os.WriteFile(path, []byte("the previous image"), 0o644); err != nil {
		t.Fatal(err)
	}
	restore := FailWritesAfter(100)
	err := WriteFile(path, testImage(), testSettings("p", ""))
	restore()
	if err == nil || !strings.Contains(err.Error(), "disk is full") {
		t.Errorf("full disk: error %v, want it to say the disk is full", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "the previous image" {
		t.Errorf("full disk: the existing file now holds %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("full disk: the folder holds %d files, want only the existing one", len(entries))
	}

	missing := filepath.Join(dir, "no such folder", "out.png")
	if err := WriteFile(missing, testImage(), testSettings("p", "")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing folder: error %v", err)
	}

	// A folder that cannot be written even by root: its path runs through a regular file.
	for _, under := range []string{filepath.Join(path, "out.png"), filepath.Join(path, "sub", "out.png")} {
		if err := WriteFile(under, testImage(), testSettings("p", "")); err == nil || !strings.Contains(err.Error(), "is a file, not a folder; choose another folder") {
			t.Errorf("folder under a file (%s): error %v", under, err)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != "the previous image" {
		t.Errorf("folder under a file: the file now holds %q", b)
	}

	locked := filepath.Join(dir, "locked")
	if err := os.Mkdir(locked, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o700)
	if probe, err := os.CreateTemp(locked, "probe"); err == nil {
		probe.Close()
		os.Remove(probe.Name())
		t.Log("running with permission to write into a read-only folder (root?): skipping the unwritable-folder check")
		return
	}
	err = WriteFile(filepath.Join(locked, "out.png"), testImage(), testSettings("p", ""))
	if err == nil || !strings.Contains(err.Error(), "may not write") {
		t.Errorf("unwritable folder: error %v", err)
	}
	if entries, _ := os.ReadDir(locked); len(entries) != 0 {
		t.Errorf("unwritable folder: it holds %d files", len(entries))
	}
}

// TestReadOtherPNGs: a PNG without Easel's chunks reads with no settings; a damaged chunk is
// refused with the file's name.
func TestReadOtherPNGs(t *testing.T) {
	var plain bytes.Buffer
	if err := png.Encode(&plain, testImage()); err != nil {
		t.Fatal(err)
	}
	m, err := Read(bytes.NewReader(plain.Bytes()), "plain.png")
	if err != nil || m.Settings != nil || m.Parameters != "" {
		t.Errorf("plain PNG: %+v, %v; want no settings and no error", m, err)
	}
	var ours bytes.Buffer
	if err := Encode(&ours, testImage(), testSettings("p", "")); err != nil {
		t.Fatal(err)
	}
	data := ours.Bytes()
	data[45] ^= 0xFF // inside the parameters chunk's text
	if _, err := Read(bytes.NewReader(data), "bad.png"); err == nil || !strings.Contains(err.Error(), "bad.png") {
		t.Errorf("damaged chunk: error %v", err)
	}
	if _, err := Read(strings.NewReader("GIF89a"), "x.gif"); err == nil {
		t.Error("a GIF read as a PNG")
	}
}

// TestVariationAndHiresAreRecorded: a variation and a second pass are written in A1111's keys
// and read back from the easel chunk.
func TestVariationAndHiresAreRecorded(t *testing.T) {
	s := testSettings("a fox", "")
	s.LoRAs, s.ModelHash, s.EaselVersion = nil, "", ""
	s.VariationSeed, s.VariationStrength = 99, 0.2
	s.Hires = &HiresSettings{Factor: 2, Width: 192, Height: 128, Strength: 0.35, Steps: 4, StepsRun: 2, Upscaler: "Lanczos", Sigmas: []float32{0.5, 0.25, 0}}
	want := "a fox\nSteps: 4, Sampler: Euler, CFG scale: 3.5, Seed: 11, Size: 96x64, Model: tiny.cmf, Variation seed: 99, Variation seed strength: 0.2, Denoising strength: 0.35, Hires upscale: 2, Hires steps: 4, Hires upscaler: Lanczos"
	if got := Parameters(s); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	path := filepath.Join(t.TempDir(), "out.png")
	if err := WriteFile(path, testImage(), s); err != nil {
		t.Fatal(err)
	}
	m, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.Settings, s) {
		t.Errorf("read back\n%+v\nwant\n%+v", m.Settings, s)
	}
}

// An image of a batch records the batch's identity, its place and the batch's size, and reads
// them back; a single image (InBatch with a count of 1) and a PNG written before batches were
// recorded have none.
func TestBatchIsRecorded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.png")
	s := testSettings("a fox", "")
	id := NewBatchID(time.Date(2026, 12, 1, 9, 0, 0, 5, time.UTC), 3, 7)
	s.InBatch(id, 2, 4)
	if err := WriteFile(path, testImage(), s); err != nil {
		t.Fatal(err)
	}
	m, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b := m.Settings.Batch; b == nil || b.ID != id || b.Index != 2 || b.Count != 4 {
		t.Errorf("read back batch %+v, want %s image 2 of 4", b, id)
	}
	if id == NewBatchID(time.Date(2026, 12, 1, 9, 0, 0, 5, time.UTC), 4, 7) {
		t.Error("two batches started at the same moment share an identity")
	}
	single := testSettings("a fox", "")
	single.InBatch(id, 0, 1)
	if single.Batch != nil {
		t.Errorf("a single image records batch %+v", single.Batch)
	}
	old := filepath.Join(t.TempDir(), "old.png")
	if err := WriteFile(old, testImage(), testSettings("a fox", "")); err != nil {
		t.Fatal(err)
	}
	if m, err := ReadFile(old); err != nil || m.Settings.Batch != nil {
		t.Errorf("a PNG without a batch reads back batch %+v (%v)", m.Settings.Batch, err)
	}
}
