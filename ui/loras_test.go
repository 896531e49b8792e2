package ui

import (
	"context"
	"easel/ui/recipe"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"

	"easel/app/jobs"
	"easel/app/memplan"
	"easel/app/settings"
	"easel/engine/convert"
	"easel/engine/lora"
	"easel/engine/lora/loratest"
	"easel/engine/qi21"
	"easel/engine/safetensors"
	"easel/engine/sched"
	"easel/internal/golden"
)

// TestLoRAThroughTheWindow runs the real generator on the tiny model: a LoRA dropped on the
// window joins the list (and the memory prediction), its strength is changed with the slider
// (saved in the LoRA list file), the image made with it records it; after the list is changed,
// dropping that image back restores the LoRA at its strength, and a missing LoRA file is named.
func TestLoRAThroughTheWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("converts and runs the tiny model")
	}
	snap, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(t.TempDir(), "tiny.cmf")
	if _, err := convert.Convert(context.Background(), snap, model, convert.Options{Profile: convert.ProfileF16, NoVision: true}); err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(snap, "transformer", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := qi21.ParseConfig(js)
	if err != nil {
		t.Fatal(err)
	}
	loraDir := t.TempDir()
	tensors, _ := loratest.Random(qi21.LinearLayers(cfg), loratest.Kohya, 4, 0.08, 3)
	loraPath := filepath.Join(t.TempDir(), "ink-style.safetensors") // dropped from elsewhere
	if err := safetensors.WriteFile(loraPath, tensors, nil); err != nil {
		t.Fatal(err)
	}
	gen := &jobs.ModelGenerator{Path: model}
	t.Cleanup(func() { gen.Close() })
	store := &settings.LoRAStore{Path: filepath.Join(t.TempDir(), "loras.json")}
	h := newHarnessWith(t, 64e9, func(h *harness, d *Deps) {
		d.Generator = gen
		d.Settings.Model = model
		d.LoRAStore, d.LoRADir = store, loraDir
		g, err := memplan.GeometryOf(model)
		if err != nil {
			t.Fatal(err)
		}
		d.Geometry = g
	})

	peakBefore := h.s.prediction.Peak
	h.s.work.Drop(fyne.Position{}, []fyne.URI{storage.NewFileURI(loraPath)})
	h.pump("the LoRA to join the list", func() bool { return len(h.s.draft().LoRAs) == 1 })
	if l := h.s.draft().LoRAs[0]; l.Path != loraPath || !l.Enabled || l.Strength != 1 || len(h.s.draft().Conditions) != 0 {
		t.Fatalf("after the drop: %+v, %d condition images", l, len(h.s.draft().Conditions))
	}
	if !strings.Contains(h.s.message.Text, "LoRA added: ink-style.safetensors") {
		t.Errorf("message %q", h.s.message.Text)
	}
	if st, _ := os.Stat(loraPath); h.s.prediction.Peak != peakBefore+st.Size() {
		t.Errorf("predicted peak %d, want %d + the LoRA's %d bytes", h.s.prediction.Peak, peakBefore, st.Size())
	}
	h.s.loras.Rows[0].Strength.SetValue(0.5)
	if h.s.draft().LoRAs[0].Strength != 0.5 || h.s.loras.Rows[0].Value.Text != "0.50" {
		t.Fatalf("strength %v, label %q after the slider moved", h.s.draft().LoRAs[0].Strength, h.s.loras.Rows[0].Value.Text)
	}
	if saved, err := store.Load(); err != nil || len(saved) != 1 || saved[0].Strength != 0.5 {
		t.Fatalf("saved LoRA list %+v, %v", saved, err)
	}

	h.s.options.SizeSelect.SetSelected(recipe.SizeCustomLabel)
	h.s.options.CustomW.SetText("256")
	h.s.options.CustomH.SetText("256")
	h.s.options.Steps.SetText("2")
	test.Type(h.s.prompt.Text, "a heron")
	test.Tap(h.s.generateBtn)
	h.pump("the image to be saved", func() bool { return len(h.s.history.Entries) == 1 })
	e := h.s.history.Entries[0]
	if e.Settings == nil || len(e.Settings.LoRAs) != 1 || e.Settings.LoRAs[0].Name != "ink-style.safetensors" || e.Settings.LoRAs[0].Strength != 0.5 || len(e.Settings.LoRAs[0].SHA256) != 64 {
		t.Fatalf("the saved image records LoRAs %+v", e.Settings)
	}

	// Change the list, then restore from the image: the LoRA comes back on, at 0.5.
	h.s.loras.Rows[0].Strength.SetValue(1.5)
	h.s.loras.Rows[0].Enabled.SetChecked(false)
	h.s.work.Drop(fyne.Position{}, []fyne.URI{storage.NewFileURI(e.Path)})
	h.answerRestore("Restore the recipe")
	h.pump("the restore", func() bool { return strings.Contains(h.s.message.Text, "Settings restored") })
	if l := h.s.draft().LoRAs; len(l) != 1 || !l[0].Enabled || l[0].Strength != 0.5 || h.s.loras.Rows[0].Strength.Value != 0.5 || !h.s.loras.Rows[0].Enabled.Checked {
		t.Errorf("after the restore the list is %+v", l)
	}

	// With the file gone (from its folder, the LoRA folder and the image's), the message names it.
	if err := os.Rename(loraPath, loraPath+".moved"); err != nil {
		t.Fatal(err)
	}
	h.s.work.Drop(fyne.Position{}, []fyne.URI{storage.NewFileURI(e.Path)})
	h.answerRestore("Restore the recipe")
	h.pump("the second restore", func() bool { return strings.Contains(h.s.message.Text, "not found") })
	if !strings.Contains(h.s.message.Text, "ink-style.safetensors") || !strings.Contains(h.s.message.Text, loraDir) {
		t.Errorf("message %q does not name the missing LoRA and where it was looked for", h.s.message.Text)
	}
	// The LoRA in the LoRA folder is found by its content, whatever its name.
	if err := os.Rename(loraPath+".moved", filepath.Join(loraDir, "renamed.safetensors")); err != nil {
		t.Fatal(err)
	}
	h.s.work.Drop(fyne.Position{}, []fyne.URI{storage.NewFileURI(e.Path)})
	h.answerRestore("Restore the recipe")
	h.pump("the third restore", func() bool {
		for _, l := range h.s.draft().LoRAs {
			if l.Enabled && filepath.Base(l.Path) == "renamed.safetensors" {
				return true
			}
		}
		return false
	})
}

// TestLoRAPresetOffer: enabling a LoRA whose metadata carries a Turbo preset offers its settings;
// using them sets 8 steps and CFG 1 and the request runs on the Turbo grid; changing the steps by
// hand leaves the preset.
func TestLoRAPresetOffer(t *testing.T) {
	h := newHarness(t, 64e9)
	path := filepath.Join(h.dir, "turbo.safetensors") // read for its metadata only: the scripted generator loads no LoRA
	if err := safetensors.WriteFile(path, []*safetensors.Tensor{safetensors.F32Tensor("transformer.img_in.lora_A.weight", []int{1, 64}, make([]float32, 64))},
		map[string]string{lora.PresetMetadataKey: `{"name":"Turbo","schedule":"turbo","steps":8,"cfg":1}`}); err != nil {
		t.Fatal(err)
	}
	h.s.work.Drop(fyne.Position{}, []fyne.URI{storage.NewFileURI(path)})
	h.pump("the preset offer", func() bool { return h.s.loras.Offer.Visible() })
	if !strings.Contains(h.s.loras.Offer.Text, "Turbo: 8 steps, CFG 1") {
		t.Fatalf("offer %q", h.s.loras.Offer.Text)
	}
	test.Tap(h.s.loras.Offer)
	if h.s.options.Steps.Text != "8" || h.s.draft().CFG != 1 || !strings.HasPrefix(h.s.loras.Offer.Text, "Using") {
		t.Fatalf("after using the preset: steps %q, CFG %v, offer %q", h.s.options.Steps.Text, h.s.draft().CFG, h.s.loras.Offer.Text)
	}
	req, err := h.s.draftCopy().Request(1)
	if err != nil {
		t.Fatal(err)
	}
	if grid := sched.TurboSampleSigmas(); len(req.Sigmas) != len(grid) || req.Scheduler == nil || req.Steps != 0 || len(req.LoRAFiles) != 1 {
		t.Errorf("request with the preset: sigmas %v, scheduler %v, steps %d, LoRA files %v", req.Sigmas, req.Scheduler, req.Steps, req.LoRAFiles)
	}
	h.s.options.Steps.SetText("12")
	if req, _ := h.s.draftCopy().Request(1); req.Sigmas != nil || req.Steps != 12 {
		t.Errorf("after changing the steps: sigmas %v, steps %d", req.Sigmas, req.Steps)
	}
}

// TestLoRAListOpensWithTheWindow: the LoRA list kept in the LoRA store (Deps.LoRAs, read at launch)
// is the list the window opens with, in its panel and in the next request.
func TestLoRAListOpensWithTheWindow(t *testing.T) {
	kept := []settings.LoRA{{Path: "/loras/ink-style.safetensors", Enabled: true, Strength: 0.5}, {Path: "/loras/off.safetensors", Strength: 1}}
	h := newHarnessWith(t, 1<<40, func(_ *harness, d *Deps) { d.LoRAs = kept })
	ls := h.s.draft().LoRAs
	if len(ls) != 2 || ls[0] != kept[0] || ls[1] != kept[1] {
		t.Fatalf("the window opened with LoRAs %+v, want %+v", ls, kept)
	}
	if len(h.s.loras.Rows) != 2 || h.s.loras.Rows[0].Value.Text != "0.50" {
		t.Errorf("the LoRA panel shows %d rows", len(h.s.loras.Rows))
	}
}
