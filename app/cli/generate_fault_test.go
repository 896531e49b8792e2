package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/engine/mmapfile"
	"easel/engine/pipeline"
	"easel/engine/pipeline/pipelinetest"
)

// TestGenerateModelFileTruncatedMidRun: the model file (a copy of the tiny model) is truncated
// after the first denoising step, on the pipeline's goroutine, so the second step's read of the
// mapping faults. easel generate exits 13 with a message naming the file, its size then and now
// and what to do, and writes nothing.
func TestGenerateModelFileTruncatedMidRun(t *testing.T) {
	whole, err := os.ReadFile(tinyCMF(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	model := filepath.Join(dir, "tiny.cmf")
	if err := os.WriteFile(model, whole, 0o644); err != nil {
		t.Fatal(err)
	}
	watch := &pipelinetest.Watch{BeforeStep: func(n int) {
		if n == 2 {
			if err := os.Truncate(model, 4096); err != nil {
				t.Error(err)
			}
		}
	}}
	adjustPipeline = func(o pipeline.Options) pipeline.Options { return pipelinetest.WatchDenoiser(o, watch) }
	defer func() { adjustPipeline = func(o pipeline.Options) pipeline.Options { return o } }()

	out := filepath.Join(dir, "out", "cube.png")
	if err := os.Mkdir(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run("generate", "--model", model, "--prompt", "a red cube", "--size", "64x64", "--steps", "3", "--seed", "5", "--out", out)
	if code != ExitModelChanged {
		t.Fatalf("exit %d, want %d (model file changed); stderr %q", code, ExitModelChanged, stderr)
	}
	t.Log(stderr)
	for _, want := range []string{"the model file " + model + " changed or became unreadable while Easel was using it",
		"it is now 4.1 kB of " + mmapfile.ByteSize(int64(len(whole))), "reconnect the drive or choose the model again", out + " was not written"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
		t.Errorf("stderr shows a crash: %q", stderr)
	}
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
		t.Errorf("the output folder holds %d files after the failed run", len(entries))
	}
	if watch.Live() != 0 {
		t.Errorf("%d denoiser programs still live", watch.Live())
	}
}
