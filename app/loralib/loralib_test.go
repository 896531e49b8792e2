package loralib

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/imagefile"
	"easel/engine/lora"
	"easel/engine/sched"
)

func TestParseSpec(t *testing.T) {
	for _, c := range []struct {
		spec, path string
		strength   float64
		bad        string
	}{
		{"a.safetensors", "a.safetensors", 1, ""},
		{"a.safetensors:0.75", "a.safetensors", 0.75, ""},
		{"dir:x/a.safetensors:-1", "dir:x/a.safetensors", -1, ""},
		{"dir:x/a.safetensors", "dir:x/a.safetensors", 1, ""},
		{":0.5", "", 0, "give a LoRA file"},
		{"a.safetensors:1e9", "", 0, "out of range"},
		{"a.safetensors:NaN", "", 0, "out of range"},
	} {
		path, s, err := ParseSpec(c.spec)
		if c.bad != "" {
			if err == nil || !strings.Contains(err.Error(), c.bad) {
				t.Errorf("%q: %v, want an error mentioning %q", c.spec, err, c.bad)
			}
			continue
		}
		if err != nil || path != c.path || s != c.strength {
			t.Errorf("%q: %q %v %v; want %q %v", c.spec, path, s, err, c.path, c.strength)
		}
	}
}

// Find matches by content: the recorded name first, then any .safetensors file, then nothing.
func TestFind(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write := func(dir, name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	one := write(a, "one.safetensors", "first")
	write(a, "decoy.safetensors", "other")
	renamed := write(b, "renamed.safetensors", "second")
	listed := write(t.TempDir(), "listed.safetensors", "third")
	h1 := fileHash(one)
	refs := []imagefile.LoRARef{
		{Name: "one.safetensors", SHA256: h1},
		{Name: "two.safetensors", SHA256: fileHash(renamed)},
		{Name: "three.safetensors", SHA256: fileHash(listed)},
		{Name: "gone.safetensors", SHA256: strings.Repeat("0", 64)},
	}
	found, missing := Find(refs, []string{listed}, []string{a, b})
	if found[0] != one || found[1] != renamed || found[2] != listed || found[3] != "" || len(missing) != 1 || missing[0].Name != "gone.safetensors" {
		t.Errorf("found %v, missing %v", found, missing)
	}
	if s := MissingSentence(missing, []string{a}); !strings.Contains(s, "gone.safetensors") || !strings.Contains(s, a) {
		t.Errorf("sentence %q", s)
	}
}

func TestPresetSettings(t *testing.T) {
	base := sched.DefaultConfig()
	steps, cfg, sigmas, sc := PresetSettings(&lora.Preset{Steps: 8, CFG: 1, Schedule: "turbo"}, base)
	if steps != 0 || cfg != 1 || len(sigmas) != 8 || sc == nil || sc.UseDynamicShifting || sc.ShiftTerminal != 0 {
		t.Errorf("turbo: %d %v %v %+v", steps, cfg, sigmas, sc)
	}
	steps, _, sigmas, sc = PresetSettings(&lora.Preset{Steps: 4, CFG: 1, Schedule: "lightning"}, base)
	if steps != 4 || sigmas != nil || sc == nil || !sc.UseDynamicShifting || sc.ShiftTerminal != 0 || sc.MaxShift != base.MaxShift {
		t.Errorf("lightning: %d %v %+v", steps, sigmas, sc)
	}
	if _, _, _, sc = PresetSettings(&lora.Preset{Steps: 20, CFG: 4}, base); sc != nil {
		t.Errorf("default schedule: scheduler %+v", sc)
	}
}
