package ui

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"

	"easel/app/imagefile"
)

// writeForeignPNG writes a PNG as another tool does: the pixels and one tEXt "parameters" chunk
// after the header, no Easel chunk.
func (h *harness) writeForeignPNG(name, parameters string) string {
	h.t.Helper()
	plain, err := os.ReadFile(h.writePNG(name, 40, 30))
	if err != nil {
		h.t.Fatal(err)
	}
	data := append([]byte("parameters\x00"), parameters...)
	var c bytes.Buffer
	binary.Write(&c, binary.BigEndian, uint32(len(data)))
	c.WriteString("tEXt")
	c.Write(data)
	binary.Write(&c, binary.BigEndian, crc32.ChecksumIEEE(append([]byte("tEXt"), data...)))
	const ihdrEnd = 8 + 4 + 4 + 13 + 4
	out := append(append(append([]byte{}, plain[:ihdrEnd]...), c.Bytes()...), plain[ihdrEnd:]...)
	path := filepath.Join(h.dir, name)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		h.t.Fatal(err)
	}
	return path
}

// A dropped PNG from another tool restores its prompts, steps, CFG, seed and size instead of
// becoming a condition image; an Easel PNG restores Easel's settings; a PNG without settings is
// still added as a condition image.
func TestDroppedPNGWithSettingsRestoresThem(t *testing.T) {
	h := newHarness(t, 64e9)
	foreign := h.writeForeignPNG("from-a1111.png", "a lighthouse at dusk, oil painting\nNegative prompt: people, boats\n"+
		"Steps: 30, Sampler: Euler, CFG scale: 5.5, Seed: 1234, Size: 1024x1536, Model hash: 6ce0161689, Model: sd_xl_base_1.0, Version: v1.7.0")
	h.s.work.Drop(fyne.Position{}, []fyne.URI{storage.NewFileURI(foreign)})
	h.answerRestore("Restore the recipe")
	h.pump("the restore", func() bool { return h.s.prompt.Text.Text != "" })
	if h.s.prompt.Text.Text != "a lighthouse at dusk, oil painting" || h.s.prompt.Negative.Text != "people, boats" ||
		h.s.options.Steps.Text != "30" || h.s.draft().CFG != 5.5 || h.s.draft().RandomSeed || h.s.options.SeedEntry.Text != "1234" ||
		h.s.options.CustomW.Text != "1024" || h.s.options.CustomH.Text != "1536" {
		t.Errorf("restored prompt %q negative %q steps %q cfg %g seed %q size %s×%s", h.s.prompt.Text.Text, h.s.prompt.Negative.Text,
			h.s.options.Steps.Text, h.s.draft().CFG, h.s.options.SeedEntry.Text, h.s.options.CustomW.Text, h.s.options.CustomH.Text)
	}
	if len(h.s.draft().Conditions) != 0 {
		t.Errorf("the PNG with settings also became a condition image")
	}
	if !strings.Contains(h.s.message.Text, "Settings restored from from-a1111.png") {
		t.Errorf("message %q", h.s.message.Text)
	}

	ours := filepath.Join(h.dir, "ours.png")
	set := &imagefile.Settings{Prompt: "an owl", Width: 1376, Height: 768, Steps: 12, CFG: 3, Seed: 99, Sampler: "Euler"}
	if err := imagefile.WriteFile(ours, image.NewNRGBA(image.Rect(0, 0, 16, 9)), set); err != nil {
		t.Fatal(err)
	}
	plain := h.writePNG("plain.png", 64, 64)
	h.s.work.Drop(fyne.Position{}, []fyne.URI{storage.NewFileURI(plain), storage.NewFileURI(ours)})
	h.answerRestore("Restore the recipe")
	h.pump("the second drop", func() bool { return len(h.s.draft().Conditions) == 1 })
	if h.s.prompt.Text.Text != "an owl" || h.s.options.SizeSelect.Selected != "16:9" || h.s.draft().Seed != 99 || h.s.draft().Conditions[0].Name != "plain.png" {
		t.Errorf("prompt %q size %q seed %d conditions %v", h.s.prompt.Text.Text, h.s.options.SizeSelect.Selected, h.s.draft().Seed, h.s.draft().Conditions[0].Name)
	}
	if !strings.Contains(h.s.message.Text, "Settings restored from ours.png") {
		t.Errorf("message %q", h.s.message.Text)
	}
}

// answerRestore waits for the question what a PNG with settings is for and answers it.
func (h *harness) answerRestore(button string) {
	h.t.Helper()
	asked := h.s.work.RestoreQuestion()
	h.pump("the restore question", func() bool { return h.s.work.RestoreQuestion() != asked })
	test.Tap(findButton(h.t, h.w.Canvas().Overlays().Top(), button))
}

// Pasting an Easel PNG's path asks too: used as a condition image it joins the list, the recipe
// stays; restored, ⌘Z brings the recipe before back.
func TestPastedEaselPNGAsks(t *testing.T) {
	h := newHarness(t, 64e9)
	ours := filepath.Join(h.dir, "made.png")
	set := &imagefile.Settings{Prompt: "an owl", Width: 1024, Height: 1024, Steps: 12, CFG: 3, Seed: 99, Sampler: "Euler"}
	if err := imagefile.WriteFile(ours, image.NewNRGBA(image.Rect(0, 0, 16, 16)), set); err != nil {
		t.Fatal(err)
	}
	h.s.prompt.Text.SetText("my prompt")
	cb := &memClipboard{text: ours}
	h.s.work.PasteImage(cb, true)
	h.answerRestore("Use as condition image")
	h.pump("the condition image", func() bool { return len(h.s.draft().Conditions) == 1 })
	if h.s.draft().Prompt != "my prompt" || h.s.draft().Conditions[0].Name != "made.png" {
		t.Fatalf("used as a condition image: prompt %q, conditions %v", h.s.draft().Prompt, conditionNames(h.s))
	}
	h.s.work.PasteImage(cb, true)
	h.answerRestore("Restore the recipe")
	h.pump("the restore", func() bool { return h.s.draft().Prompt == "an owl" })
	h.s.undo()
	if h.s.draft().Prompt != "my prompt" || len(h.s.draft().Conditions) != 1 {
		t.Errorf("⌘Z after the restore: prompt %q, %d condition images", h.s.draft().Prompt, len(h.s.draft().Conditions))
	}
}

// memClipboard is a clipboard holding text.
type memClipboard struct{ text string }

func (c *memClipboard) Content() string        { return c.text }
func (c *memClipboard) SetContent(text string) { c.text = text }
