package convert

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// snapshotWithOwnCopy is the tiny snapshot with component's folder copied (the rest linked), so a
// test may truncate that component's weights.
func snapshotWithOwnCopy(t *testing.T, component string) (dir, weights string) {
	t.Helper()
	orig := tinySnapshot(t)
	dir = t.TempDir()
	entries, err := os.ReadDir(orig)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		abs, _ := filepath.Abs(filepath.Join(orig, e.Name()))
		if e.Name() != component {
			if err := os.Symlink(abs, filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
			continue
		}
		os.Mkdir(filepath.Join(dir, component), 0o755)
		files, _ := os.ReadDir(abs)
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(abs, f.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, component, f.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	weights = filepath.Join(dir, component, "diffusion_pytorch_model.safetensors")
	if component == "text_encoder" {
		weights = filepath.Join(dir, component, "model.safetensors")
	}
	return dir, weights
}

// A snapshot file truncated while it is converted (its drive unplugged, say) stops the conversion
// with a message that names the file and says what happened and what to do — not a disk-space
// problem — and leaves no output: whether the tensor was being copied as it is (the cortiq profile
// keeps the denoiser's f32 input projection; f16 keeps the tiny VAE's f32 weights) or encoded (the
// text encoder's projections become q8_2f). Tensor data is read with ReadAt, never through the
// mapping, so a truncation is a short read here, not a fault.
func TestSnapshotTruncatedDuringConversion(t *testing.T) {
	for _, tc := range []struct {
		name      string
		profile   Profile
		component string
		at        func(tensor string) bool
	}{
		{"copied dit", ProfileCortiq, "transformer", func(n string) bool { return strings.HasPrefix(n, "dit.") }},
		{"copied vae", ProfileF16, "vae", func(n string) bool { return strings.HasPrefix(n, "vae.") }},
		{"encoded te", ProfileCortiq, "text_encoder", func(n string) bool { return strings.HasPrefix(n, "te.") && strings.HasSuffix(n, "proj.weight") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap, weights := snapshotWithOwnCopy(t, tc.component)
			outDir := t.TempDir()
			truncatedAt := ""
			_, err := Convert(context.Background(), snap, filepath.Join(outDir, "out.cmf"), Options{Profile: tc.profile, Progress: func(p Progress) {
				if truncatedAt == "" && tc.at(p.Tensor) {
					truncatedAt = p.Tensor
					if err := os.Truncate(weights, 4096); err != nil {
						t.Error(err)
					}
				}
			}})
			if truncatedAt == "" || err == nil {
				t.Fatalf("truncated at %q; error %v", truncatedAt, err)
			}
			for _, want := range []string{"the snapshot file " + weights + " ended", "the file changed or its drive went away during the conversion", "then convert again"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "disk space") {
				t.Errorf("a vanished source blamed the disk: %v", err)
			}
			if left, _ := os.ReadDir(outDir); len(left) != 0 {
				t.Errorf("the failed conversion left %v behind", left)
			}
		})
	}
}
