package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/imagefile"
	"easel/engine/pipeline"
	"easel/engine/pipeline/pipelinetest"
)

// TestGenerateCannotSave: when saving fails after the run — the disk fills up (ENOSPC after the
// first bytes of the PNG), or the output folder is replaced by a file while the image is made (a
// real failure, even for root) — easel generate exits 9 with a message that names the file, says
// why and what to do, and leaves nothing half-written behind.
func TestGenerateCannotSave(t *testing.T) {
	model := tinyCMF(t)
	args := func(out string) []string {
		return []string{"generate", "--model", model, "--prompt", "a red cube", "--size", "32x32", "--steps", "2", "--seed", "3", "--out", out}
	}

	t.Run("disk full", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "cube.png")
		restore := imagefile.FailWritesAfter(100)
		code, _, stderr := run(args(out)...)
		restore()
		if code != ExitWrite {
			t.Fatalf("exit %d, want %d; stderr %q", code, ExitWrite, stderr)
		}
		for _, want := range []string{"cannot save " + out, "the disk is full; free some space or choose another folder"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr %q lacks %q", stderr, want)
			}
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("the folder holds %v after the failed save, want nothing half-written", entries)
		}
	})

	t.Run("folder replaced by a file", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "images")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "cube.png")
		watch := &pipelinetest.Watch{BeforeStep: func(n int) {
			if n == 1 {
				if err := os.Remove(dir); err != nil {
					t.Error(err)
				}
				if err := os.WriteFile(dir, []byte("not a folder"), 0o644); err != nil {
					t.Error(err)
				}
			}
		}}
		adjustPipeline = func(o pipeline.Options) pipeline.Options { return pipelinetest.WatchDenoiser(o, watch) }
		defer func() { adjustPipeline = func(o pipeline.Options) pipeline.Options { return o } }()
		code, _, stderr := run(args(out)...)
		if code != ExitWrite {
			t.Fatalf("exit %d, want %d; stderr %q", code, ExitWrite, stderr)
		}
		for _, want := range []string{"cannot save " + out, dir + " is a file, not a folder; choose another folder"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr %q lacks %q", stderr, want)
			}
		}
		if b, err := os.ReadFile(dir); err != nil || string(b) != "not a folder" {
			t.Errorf("the file in the folder's place now holds %q (%v)", b, err)
		}
		if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 {
			t.Errorf("the parent folder holds %v, want only the file", entries)
		}
	})
}
