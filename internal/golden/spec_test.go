package golden

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A pipeline case from another folder: every setting differs from the public cases' (seed 11,
// their prompts, sizes and steps), so a reader that fell back to a public value would show.
const otherPipelineMeta = `{"name": "other", "prompt": "a lighthouse at dusk", "height": 80, "width": 48,
 "steps": 7, "cond": true, "cfg": 4.5, "neg": "fog", "res": 112,
 "img_shapes": [[[1, 2, 6], [1, 5, 3]]], "cond_images": ["other_cond0.png"],
 "seed_note": "generator=torch.Generator('cpu').manual_seed(20260917)"}`

func TestParsePipelineReadsEverySettingFromTheMetadata(t *testing.T) {
	var meta map[string]any
	if err := json.Unmarshal([]byte(otherPipelineMeta), &meta); err != nil {
		t.Fatal(err)
	}
	p, err := ParsePipeline(meta)
	if err != nil {
		t.Fatal(err)
	}
	want := &Pipeline{Prompt: "a lighthouse at dusk", Negative: "fog", HasNegative: true, CFG: 4.5, Steps: 7,
		Width: 48, Height: 80, Resolution: 112, Shapes: [][2]int{{2, 6}, {5, 3}},
		CondImages: []string{"other_cond0.png"}, Seed: 20260917}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("read\n%+v\nwant\n%+v", p, want)
	}
	if h, w := p.Target(); h != 5 || w != 3 || p.Conditions() != 1 {
		t.Errorf("target %d×%d with %d conditions, want 5×3 with 1", h, w, p.Conditions())
	}

	// A numeric "seed" wins when the note is absent; null size and negative read as "not given";
	// "output_resolution" is accepted for "res".
	meta["seed"] = 7.0
	delete(meta, "seed_note")
	meta["width"], meta["height"], meta["neg"] = nil, nil, nil
	delete(meta, "res")
	meta["output_resolution"] = 96.0
	if p, err = ParsePipeline(meta); err != nil {
		t.Fatal(err)
	}
	if p.Seed != 7 || p.Width != 0 || p.Height != 0 || p.HasNegative || p.Negative != "" || p.Resolution != 96 {
		t.Errorf("seed %d, size %d×%d, negative %v %q, resolution %d", p.Seed, p.Width, p.Height, p.HasNegative, p.Negative, p.Resolution)
	}
}

func TestParsePipelineNamesWhatIsWrong(t *testing.T) {
	for _, tc := range []struct {
		edit func(m map[string]any)
		says string
	}{
		{func(m map[string]any) { delete(m, "seed_note") }, "seed"},
		{func(m map[string]any) { m["seed_note"] = "generator=None" }, "manual_seed"},
		{func(m map[string]any) { m["seed"] = 12.0 }, "disagree"},
		{func(m map[string]any) { delete(m, "steps") }, `"steps"`},
		{func(m map[string]any) { m["cfg"] = "high" }, `"cfg"`},
		{func(m map[string]any) { m["width"] = nil }, `"width"`},
		{func(m map[string]any) { m["cond_images"] = []any{} }, "condition"},
		{func(m map[string]any) { delete(m, "img_shapes") }, "img_shapes"},
		{func(m map[string]any) { delete(m, "prompt") }, `"prompt"`},
	} {
		var meta map[string]any
		if err := json.Unmarshal([]byte(otherPipelineMeta), &meta); err != nil {
			t.Fatal(err)
		}
		tc.edit(meta)
		if _, err := ParsePipeline(meta); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("error %v, want one naming %s", err, tc.says)
		}
	}
}

func TestParseDiT(t *testing.T) {
	var meta map[string]any
	if err := json.Unmarshal([]byte(`{"img_shapes": [[1, 4, 6], [1, 2, 2]], "sigmas": [0.9, 0.3]}`), &meta); err != nil {
		t.Fatal(err)
	}
	d, err := ParseDiT(meta)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Shapes, [][2]int{{4, 6}, {2, 2}}) || !reflect.DeepEqual(d.Sigmas, []float32{0.9, 0.3}) || d.Conditions() != 1 {
		t.Errorf("read %+v", d)
	}
	delete(meta, "sigmas")
	if _, err := ParseDiT(meta); err == nil || !strings.Contains(err.Error(), "sigmas") {
		t.Errorf("without sigmas: %v", err)
	}
}

// Every public pipeline case reads without error, and its seed is the one its note names.
func TestPipelineCasesRead(t *testing.T) {
	paths, err := Cases("pipeline")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		c, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		p, err := c.Pipeline()
		c.Close()
		if err != nil {
			t.Error(err)
			continue
		}
		t.Logf("%s: seed %d, %d steps, CFG %g, %d condition images, target %v", c.Name, p.Seed, p.Steps, p.CFG, p.Conditions(), p.Shapes[len(p.Shapes)-1])
	}
}

// A folder without debug/ has no debug cases and no error; a debug case names its subject.
func TestDebugCasesAreOptional(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvDir, dir)
	for _, kind := range []string{"dit", "vae", "textenc"} {
		if paths, err := DebugCases(kind); err != nil || len(paths) != 0 {
			t.Errorf("%s: %v, %v; want none and no error", kind, paths, err)
		}
	}
	if vendored, err := IsVendored(); err != nil || vendored {
		t.Errorf("IsVendored with %s=%s: %v, %v", EnvDir, dir, vendored, err)
	}
	c := &Case{Name: "debug_textenc_x", Meta: map[string]any{"case": "pipeline_b, positive prompt (te0_* inputs)"}}
	if s, err := c.Subject(); err != nil || s != "pipeline_b" {
		t.Errorf("subject %q, %v", s, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "debug"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "debug", "debug_vae_a.safetensors"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if paths, err := DebugCases("vae"); err != nil || len(paths) != 1 {
		t.Errorf("one debug_vae file: %v, %v", paths, err)
	}
}
