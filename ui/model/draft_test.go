package model

import (
	"image"
	"testing"

	"easel/app/compose"
	"easel/app/imagefile"
	"easel/app/settings"
)

// TestDraftActionsTellObservers: each named action changes the draft and tells the DraftChanged
// observers once; setting a value the draft already has tells no one (a panel showing the draft
// does not echo back); observers of other parts are not told.
func TestDraftActionsTellObservers(t *testing.T) {
	w := New(compose.NewDraft(settings.Settings{Width: 1024, Height: 1024, Steps: 30, CFG: 4}))
	drafts, others := 0, 0
	w.Observe(DraftChanged, func(Change) { drafts++ })
	w.Observe(CanvasChanged|NoticeChanged|JobsChanged, func(Change) { others++ })
	steps := []struct {
		name string
		act  func()
		want func(d compose.Draft) bool
	}{
		{"SetPrompt", func() { w.SetPrompt("an owl") }, func(d compose.Draft) bool { return d.Prompt == "an owl" }},
		{"SetNegative", func() { w.SetNegative("blurry") }, func(d compose.Draft) bool { return d.Negative == "blurry" }},
		{"SetTransparent", func() { w.SetTransparent(true) }, func(d compose.Draft) bool { return d.Transparent }},
		{"SetSteps", func() { w.SetSteps(12) }, func(d compose.Draft) bool { return d.Steps == 12 }},
		{"SetCount", func() { w.SetCount(4) }, func(d compose.Draft) bool { return d.Count == 4 }},
		{"SetCFG", func() { w.SetCFG(2.5) }, func(d compose.Draft) bool { return d.CFG == 2.5 && d.Guided() }},
		{"SetRandomSeed", func() { w.SetRandomSeed(false) }, func(d compose.Draft) bool { return !d.RandomSeed }},
		{"SetSeed", func() { w.SetSeed(77) }, func(d compose.Draft) bool { return d.Seed == 77 }},
		{"SetCustomSize", func() { w.SetCustomSize(832, 512) }, func(d compose.Draft) bool {
			return d.Size == compose.SizeCustom && d.CustomW == 832 && d.CustomH == 512
		}},
		{"SetPresetSize", func() { w.SetPresetSize(compose.Aspects[1]) }, func(d compose.Draft) bool {
			return d.Size == compose.SizePreset && d.Aspect == compose.Aspects[1]
		}},
		{"SetScale", func() { w.SetScale(compose.Scale2K) }, func(d compose.Draft) bool { return d.Scale == compose.Scale2K }},
		{"SetSizeMode", func() { w.SetSizeMode(compose.SizeFromImage) }, func(d compose.Draft) bool { return d.Size == compose.SizeFromImage }},
		{"SetCustomSides", func() { w.SetCustomSides(640, 480) }, func(d compose.Draft) bool {
			return d.Size == compose.SizeFromImage && d.CustomW == 640 && d.CustomH == 480
		}},
		{"SetBackend", func() { w.SetBackend(settings.BackendCPU) }, func(d compose.Draft) bool { return d.Backend == settings.BackendCPU }},
		{"SetModel", func() { w.SetModel("/models/q.cmf") }, func(d compose.Draft) bool { return d.Model == "/models/q.cmf" }},
		{"FixSeed", func() { w.FixSeed(5, 9, 0.25) }, func(d compose.Draft) bool {
			return d.Seed == 5 && !d.RandomSeed && d.VariationSeed == 9 && d.VariationStrength == 0.25
		}},
	}
	for _, s := range steps {
		before := drafts
		s.act()
		if !s.want(w.Draft()) {
			t.Errorf("%s: the draft is %+v", s.name, w.Draft())
		}
		if drafts != before+1 {
			t.Errorf("%s told the observers %d times, want once", s.name, drafts-before)
		}
		s.act() // the same value again
		if drafts != before+1 {
			t.Errorf("%s with the value the draft has told the observers again", s.name)
		}
	}
	if others != 0 {
		t.Errorf("draft actions told %d observers of other parts", others)
	}
}

// TestDraftIsACopy: what Draft returns can be changed without changing the model; only actions do.
func TestDraftIsACopy(t *testing.T) {
	w := New(compose.Draft{})
	if !w.AddLoRA("/loras/ink.safetensors") || w.AddLoRA("/loras/ink.safetensors") {
		t.Fatal("AddLoRA: the first add must add, the second report the duplicate")
	}
	d := w.Draft()
	d.LoRAs[0].Strength = -1
	d.Prompt = "changed outside"
	if got := w.Draft(); got.LoRAs[0].Strength != 1 || got.Prompt != "" {
		t.Errorf("changing the copy changed the model: %+v", got)
	}
	w.SetLoRAStrength(0, 0.5)
	w.EnableLoRA(0, false)
	w.EnableLoRA(3, true) // no such LoRA: nothing happens
	if l := w.Draft().LoRAs; len(l) != 1 || l[0].Strength != 0.5 || l[0].Enabled {
		t.Errorf("LoRAs after strength and enable: %+v", l)
	}
	w.RemoveLoRA(0)
	if len(w.Draft().LoRAs) != 0 {
		t.Error("RemoveLoRA left the LoRA")
	}
}

// TestDraftConditions: conditions are added up to the limit (the eleventh refused with a sentence
// that says what to do, nothing told), moved and removed.
func TestDraftConditions(t *testing.T) {
	w := New(compose.Draft{})
	told := 0
	w.Observe(DraftChanged, func(Change) { told++ })
	for i := 0; i < compose.MaxConditions; i++ {
		c := compose.Condition{Name: string(rune('a' + i)), Image: image.NewNRGBA(image.Rect(0, 0, 8, 8))}
		if err := w.AddCondition(c); err != nil {
			t.Fatalf("condition %d: %v", i, err)
		}
	}
	err := w.AddCondition(compose.Condition{Name: "one too many"})
	if err == nil || told != compose.MaxConditions {
		t.Fatalf("the eleventh: err %v, observers told %d times", err, told)
	}
	w.MoveCondition(0, 1)
	if c := w.Draft().Conditions; c[0].Name != "b" || c[1].Name != "a" {
		t.Errorf("after moving the first right: %s, %s", c[0].Name, c[1].Name)
	}
	w.RemoveCondition(0)
	if c := w.Draft().Conditions; len(c) != compose.MaxConditions-1 || c[0].Name != "a" {
		t.Errorf("after removing the first: %d left, first %q", len(c), c[0].Name)
	}
}

// TestDraftRestoreKeepsTheStartOnTheCanvas: restoring an image made from a start image takes its
// recipe, leaves no start image in the draft (the canvas document holds it) and turns a size that
// followed the image into the size it made; Saved and Resume carry the draft across a relaunch.
func TestDraftRestoreKeepsTheStartOnTheCanvas(t *testing.T) {
	w := New(compose.NewDraft(settings.Settings{Width: 1024, Height: 1024, Steps: 30, CFG: 4}))
	told := 0
	w.Observe(DraftChanged, func(Change) { told++ })
	set := &imagefile.Settings{Prompt: "a fox", Width: 832, Height: 512, Steps: 20, CFG: 3, Seed: 42,
		Init: &imagefile.InitSettings{Image: imagefile.ImageRef{Name: "photo.png"}, Strength: 0.6}}
	note := w.Restore(set, []string{"/loras"})
	d := w.Draft()
	if d.Prompt != "a fox" || d.Steps != 20 || d.Seed != 42 || d.RandomSeed || d.Start != nil {
		t.Errorf("restored draft %+v (note %q)", d, note)
	}
	if d.Size != compose.SizeCustom || d.CustomW != 832 || d.CustomH != 512 {
		t.Errorf("size %v %d×%d, want the custom size the image made", d.Size, d.CustomW, d.CustomH)
	}
	if len(d.LoRADirs) != 1 || d.LoRADirs[0] != "/loras" || told != 1 {
		t.Errorf("LoRA folders %v, observers told %d times", d.LoRADirs, told)
	}
	saved := w.Saved()
	again := New(compose.NewDraft(settings.Settings{Width: 1024, Height: 1024, Steps: 30, CFG: 4}))
	again.Resume(saved)
	if r := again.Draft(); r.Prompt != "a fox" || r.Steps != 20 || r.CustomW != 832 || r.Seed != 42 {
		t.Errorf("resumed draft %+v", r)
	}
}
