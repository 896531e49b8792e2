package keeping

import (
	"image"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/compose"
	"easel/app/settings"

	"easel/ui/model"
)

// The draft built alone: saved with its canvas (written again after a mask stroke), and a new model resumed from the store has the prompt, the extension and the pixels;
// a removed start image takes its files away; a damaged draft is an error naming the file.
func TestDraftKeptAcrossLaunches(t *testing.T) {
	dir := t.TempDir()
	store := &settings.DraftStore{Path: filepath.Join(dir, "draft.json")}
	m := model.New(compose.NewDraft(settings.Settings{}))
	m.SetPrompt("a heron at dawn")
	img := image.NewNRGBA(image.Rect(0, 0, 48, 32))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	m.SetStart(compose.Condition{Name: "photo.png", Image: img, SHA256: "abc"})
	m.SetExtend([4]int{16, 0, 0, 0})
	m.Canvas().Start.Mask.Image().SetGray(4, 4, color.Gray{Y: 255})
	k := NewDraft(store, m)
	k.Save(0)
	files := func() []string {
		var out []string
		es, _ := os.ReadDir(dir)
		for _, e := range es {
			if e.Name() != "draft.json" {
				out = append(out, e.Name())
			}
		}
		return out
	}
	written := files()
	if len(written) != 2 {
		t.Fatalf("the canvas wrote %v, want the start image and the mask", written)
	}
	for _, f := range written {
		os.Remove(filepath.Join(dir, f))
	}
	k.Save(1) // a mask stroke: written again
	if got := files(); len(got) != 2 {
		t.Errorf("after a mask edit the canvas wrote %v", got)
	}

	m2 := model.New(compose.NewDraft(settings.Settings{}))
	if err := NewDraft(store, m2).Resume(); err != nil {
		t.Fatal(err)
	}
	c := m2.Canvas()
	if m2.Draft().Prompt != "a heron at dawn" || c.Start == nil || c.Extend != [4]int{16, 0, 0, 0} {
		t.Fatalf("resumed prompt %q, start %v, extension %v", m2.Draft().Prompt, c.Start != nil, c.Extend)
	}
	if string(c.Start.Image.Image.Pix) != string(img.Pix) || string(c.Start.Mask.Image().Pix) != string(m.Canvas().Start.Mask.Image().Pix) {
		t.Error("the start image or its mask came back different")
	}

	m.RemoveStart()
	k.Save(1)
	if got := files(); len(got) != 0 {
		t.Errorf("with no start image the canvas files stay: %v", got)
	}
	if m.Notice().Text != "" {
		t.Errorf("saving said %q", m.Notice().Text)
	}

	if err := os.WriteFile(store.Path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := NewDraft(store, model.New(compose.NewDraft(settings.Settings{}))).Resume()
	if err == nil || !strings.Contains(err.Error(), "draft.json") {
		t.Errorf("a damaged draft resumes with %v", err)
	}
	if err := NewDraft(nil, m).Resume(); err != nil {
		t.Errorf("no store: %v", err)
	}
}
