package compose

import (
	"strings"
	"testing"

	"easel/app/imagefile"
	"easel/app/settings"
)

// A PNG from another tool restores the prompts, steps, CFG, seed and size its parameters text
// gives; Easel's own settings win over the text; a PNG with neither leaves the draft alone.
func TestRestoreFile(t *testing.T) {
	fresh := func() Draft { return NewDraft(settings.Defaults()) }

	d := fresh()
	note, ok := d.RestoreFile(&imagefile.Metadata{Parameters: "a lighthouse at dusk, oil painting\nNegative prompt: people\n" +
		"Steps: 30, Sampler: DPM++ 2M Karras, CFG scale: 5.5, Seed: 1234, Size: 1000x1500, Model: sd_xl_base_1.0"})
	if !ok {
		t.Fatal("a parameters text was not restored")
	}
	if d.Prompt != "a lighthouse at dusk, oil painting" || d.Negative != "people" || d.Steps != 30 || d.CFG != 5.5 ||
		d.Seed != 1234 || d.RandomSeed || d.Size != SizeCustom || d.CustomW != 992 || d.CustomH != 1504 {
		t.Errorf("restored %+v", d)
	}
	if !strings.Contains(note, "1000×1500 became 992×1504") || !strings.Contains(note, "DPM++ 2M Karras") {
		t.Errorf("note %q should mention the snapped size and the sampler", note)
	}

	// Values outside what the window takes are brought into range, and the note says so.
	d = fresh()
	note, _ = d.RestoreFile(&imagefile.Metadata{Parameters: "x\nSteps: 1, Sampler: Euler, CFG scale: 12, Seed: 3"})
	if d.Steps != 2 || d.CFG != 10 || !strings.Contains(note, "1 steps became 2") || !strings.Contains(note, "12 became 10") || strings.Contains(note, "sampler") {
		t.Errorf("out of range: steps %d cfg %g note %q", d.Steps, d.CFG, note)
	}

	// Only a prompt: the rest stays.
	d = fresh()
	if _, ok := d.RestoreFile(&imagefile.Metadata{Parameters: "just words"}); !ok || d.Prompt != "just words" || d.Steps != 40 || !d.RandomSeed {
		t.Errorf("prompt-only text gave ok=%v %+v", ok, d)
	}

	// Easel's settings win over the text; a preset size is chosen as a preset.
	d = fresh()
	set := &imagefile.Settings{Prompt: "ours", Width: 2752, Height: 1536, Steps: 12, CFG: 3, Seed: 5}
	if _, ok := d.RestoreFile(&imagefile.Metadata{Settings: set, Parameters: imagefile.Parameters(&imagefile.Settings{Prompt: "theirs"})}); !ok ||
		d.Prompt != "ours" || d.Size != SizePreset || d.Aspect.Name != "16:9" || d.Scale != Scale2K {
		t.Errorf("easel settings gave ok=%v %+v", ok, d)
	}

	for _, md := range []*imagefile.Metadata{nil, {}, {Parameters: "  \n "}} {
		d = fresh()
		if _, ok := d.RestoreFile(md); ok || d.Prompt != "" {
			t.Errorf("%+v: ok=%v prompt %q, want nothing restored", md, ok, d.Prompt)
		}
	}
}
