package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/imagefile"
	"easel/engine/lora"
	"easel/engine/safetensors"
	"easel/engine/sched"
)

// TestGenerateTurboSnapshot: a snapshot whose scheduler is configured for a fixed grid, as
// Qwen-Image-2.1-Turbo's is, converts and generates with the Turbo grid by default (8 steps, CFG
// off), and the image records that schedule.
func TestGenerateTurboSnapshot(t *testing.T) {
	model := convertedCopy(t, func(rel string, b []byte) []byte {
		if rel != "scheduler/scheduler_config.json" {
			return b
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		m["use_dynamic_shifting"], m["shift"], m["shift_terminal"] = false, 1.0, nil
		out, _ := json.Marshal(m)
		return out
	})
	out := filepath.Join(t.TempDir(), "turbo.png")
	if code, _, stderr := run("generate", "--model", model, "--prompt", "a fox", "--size", "64x64", "--seed", "1", "--out", out); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m, err := imagefile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	grid := sched.TurboSampleSigmas()
	s := m.Settings
	if s.Steps != len(grid) || s.CFG != 1 || len(s.Sigmas) != len(grid)+1 || s.Sigmas[len(grid)] != 0 {
		t.Fatalf("steps %d, cfg %v, sigmas %v; want the %d-step Turbo grid %v then 0", s.Steps, s.CFG, s.Sigmas, len(grid), grid)
	}
	for i, v := range grid {
		if s.Sigmas[i] != float32(v) {
			t.Errorf("sigma %d is %v, the Turbo grid's %v", i, s.Sigmas[i], v)
		}
	}
}

// TestGenerateLoRAPreset: a LoRA whose metadata carries a Turbo preset runs, with --lora-preset,
// on the Turbo grid at CFG 1; without the flag the command says what the LoRA suggests.
func TestGenerateLoRAPreset(t *testing.T) {
	model := tinyCMF(t)
	dir := t.TempDir()
	plain, _ := writeRandomLoRA(t, dir)
	st, err := safetensors.Open(plain)
	if err != nil {
		t.Fatal(err)
	}
	var tensors []*safetensors.Tensor
	for _, n := range st.Names() {
		tensors = append(tensors, st.Tensor(n))
	}
	turbo := filepath.Join(dir, "turbo.safetensors")
	err = safetensors.WriteFile(turbo, tensors, map[string]string{lora.PresetMetadataKey: `{"name":"Turbo","schedule":"turbo","steps":8,"cfg":1}`})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "p.png")
	code, _, stderr := run("generate", "--model", model, "--prompt", "x", "--size", "64x64", "--seed", "2", "--cfg", "3", "--lora", turbo, "--out", out)
	if code != ExitOK || !strings.Contains(stderr, "Turbo: 8 steps, CFG 1, the Turbo sigma grid") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = run("generate", "--model", model, "--prompt", "x", "--size", "64x64", "--seed", "2", "--lora", turbo, "--lora-preset", "--out", out)
	if code != ExitOK {
		t.Fatalf("--lora-preset: exit %d: %s", code, stderr)
	}
	m, err := imagefile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	grid := sched.TurboSampleSigmas()
	if s := m.Settings; s.Steps != len(grid) || s.CFG != 1 || len(s.Sigmas) != len(grid)+1 || s.Sigmas[1] != float32(grid[1]) {
		t.Errorf("--lora-preset: steps %d, cfg %v, sigmas %v", s.Steps, s.CFG, s.Sigmas)
	}
}
