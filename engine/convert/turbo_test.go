package convert

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"easel/engine/cmf"
	"easel/engine/sched"
)

// copySnapshot copies the tiny snapshot, letting edit rewrite any file (by its relative path).
func copySnapshot(t *testing.T, edit func(rel string, b []byte) []byte) string {
	t.Helper()
	src := tinySnapshot(t)
	dst := filepath.Join(t.TempDir(), "snapshot")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), edit(filepath.ToSlash(rel), b), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// setJSON rewrites keys of a JSON object.
func setJSON(t *testing.T, b []byte, kv map[string]any) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range kv {
		m[k] = v
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestConvertTurboSnapshot: a snapshot whose scheduler is configured for a fixed grid (as
// Qwen-Image-2.1-Turbo's is) converts with the Turbo grid as its default schedule (8 steps, CFG
// off); one whose model_index.json lists sample_sigmas gets that list; the base snapshot gets
// none.
func TestConvertTurboSnapshot(t *testing.T) {
	fixed := map[string]any{"use_dynamic_shifting": false, "shift": 1.0, "shift_terminal": nil}
	own := []float64{1, 0.75, 0.5}
	for _, c := range []struct {
		name  string
		edit  func(rel string, b []byte) []byte
		grid  []float64
		steps float64
	}{
		{"base", func(_ string, b []byte) []byte { return b }, nil, 40},
		{"turbo scheduler", func(rel string, b []byte) []byte {
			if rel == "scheduler/scheduler_config.json" {
				return setJSON(t, b, fixed)
			}
			return b
		}, sched.TurboSampleSigmas(), 8},
		{"listed sample_sigmas", func(rel string, b []byte) []byte {
			switch rel {
			case "scheduler/scheduler_config.json":
				return setJSON(t, b, fixed)
			case "model_index.json":
				return setJSON(t, b, map[string]any{"sample_sigmas": own})
			}
			return b
		}, own, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			snap := copySnapshot(t, c.edit)
			out := filepath.Join(t.TempDir(), "m.cmf")
			if _, err := Convert(context.Background(), snap, out, Options{Profile: ProfileF16, NoVision: true}); err != nil {
				t.Fatal(err)
			}
			f, err := cmf.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			js, err := f.ConfigJSON("qi21.config_json")
			if err != nil {
				t.Fatal(err)
			}
			grid, err := sched.SampleSigmas(js)
			if err != nil {
				t.Fatal(err)
			}
			var d struct {
				Steps float64 `json:"steps"`
				CFG   float64 `json:"cfg"`
			}
			json.Unmarshal(js, &d)
			if !reflect.DeepEqual(grid, c.grid) || d.Steps != c.steps || d.CFG != 1 {
				t.Errorf("defaults %s: grid %v, steps %v, cfg %v; want grid %v, %v steps, cfg 1", js, grid, d.Steps, d.CFG, c.grid, c.steps)
			}
		})
	}
}
