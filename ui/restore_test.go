package ui

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/history"
	"easel/app/imagefile"
)

// Restoring an image replaces the condition images with the ones it was made with: those in the
// list before go, the image's own are found beside it by name and content, and a missing one is
// named (broken item 3: the list kept the images already in it).
func TestRestoreReplacesTheConditionImages(t *testing.T) {
	h := newHarness(t, 64e9)
	s := h.s
	s.addFiles([]string{h.writePNG("mine-1.png", 64, 48), h.writePNG("mine-2.png", 48, 64)})
	h.pump("the condition images", func() bool { return len(s.draft.Conditions) == 2 })

	// Made without condition images: the list empties.
	plain := &imagefile.Settings{Prompt: "a kite", Width: 512, Height: 512, Steps: 8, CFG: 1, Seed: 3}
	s.restore(history.Entry{Path: filepath.Join(h.dir, "plain.png"), Settings: plain})
	if n := len(s.draft.Conditions); n != 0 {
		t.Fatalf("after restoring an image made without condition images the list holds %d", n)
	}
	if d := s.jobDraft(); len(d.Conditions) != 0 {
		t.Fatalf("the restored recipe asks for %d condition images", len(d.Conditions))
	}

	// Made with one found beside it (and one that is not there): the list holds the found one.
	folder := t.TempDir()
	ref := h.writePNG("ref.png", 80, 60)
	data, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "ref.png"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	with := &imagefile.Settings{Prompt: "a kite over ref", Width: 512, Height: 512, Steps: 8, CFG: 1, Seed: 4,
		Images: []imagefile.ImageRef{{Name: "ref.png", SHA256: hex.EncodeToString(sum[:])}, {Name: "gone.png", SHA256: "00"}}}
	s.addFiles([]string{h.writePNG("mine-3.png", 64, 48)})
	h.pump("another condition image", func() bool { return len(s.draft.Conditions) == 1 })
	s.restore(history.Entry{Path: filepath.Join(folder, "made.png"), Settings: with})
	if len(s.draft.Conditions) != 1 || s.draft.Conditions[0].Name != "ref.png" {
		t.Fatalf("after restoring an image made with ref.png the list holds %v", conditionNames(s))
	}
	if !strings.Contains(s.message.Text, "gone.png") {
		t.Errorf("the missing condition image is not named: %q", s.message.Text)
	}
	if got := s.conditions.count.Text; !strings.HasPrefix(got, "1 of") {
		t.Errorf("the list's count says %q", got)
	}
}

func conditionNames(s *studio) []string {
	var out []string
	for _, c := range s.draft.Conditions {
		out = append(out, c.Name)
	}
	return out
}
