package jobs

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/backend"
	"easel/app/diagnose"
	"easel/engine/convert"
	"easel/engine/pipeline"
	"easel/internal/tinymodel"
	"easel/kernels/emu"
)

// A job of the window's queue (the real generator, the Metal path on the emulator, no profiling
// mode) leaves the last-job record `easel diagnose` prints: every stage with its wall time, GPU
// time and a non-zero peak memory; the GPU time per kernel class of the classes the networks
// dispatch, labelled sampled, adding up to the stages' GPU time within the record's rounding; the
// notices; and nothing personal (the model's file name, never its folder or the prompt).
func TestTheQueueRecordsTheLastJobForDiagnose(t *testing.T) {
	if testing.Short() {
		t.Skip("converts and runs the tiny model on the Metal emulator")
	}
	if _, err := emu.NewDevice(emu.Options{}); errors.Is(err, emu.ErrNoCompiler) {
		t.Skipf("Metal emulator unavailable: %v", err)
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // the device's persisted recovery policy goes there
	t.Setenv(emu.FaultEnv, "")
	t.Setenv("EASEL_METAL_PROF", "")
	src := tinymodel.Path(t, convert.Options{Profile: convert.ProfileCortiq})
	folder := filepath.Join(t.TempDir(), "private-folder")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(folder, "tiny-model.cmf")
	if err := os.Symlink(src, model); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gen := &ModelGenerator{Path: model, Backend: backend.Emulator, DiagnosticsDir: dir}
	defer gen.Close()
	rec := newRecorder()
	q := New(gen, rec.notify)
	defer q.Close()
	const prompt = "a very private lighthouse"
	if _, err := q.Submit(pipeline.Request{Prompt: prompt, Width: 64, Height: 64, Steps: 2, Seed: 7}, "tiny"); err != nil {
		t.Fatal(err)
	}
	if j := <-rec.finished; j.State != Done {
		t.Fatalf("job ended %v: %v", j.State, j.Err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "diagnostics", "last-job.json"))
	if err != nil {
		t.Fatalf("the queue wrote no last-job record: %v", err)
	}
	for _, secret := range []string{prompt, "private-folder", folder} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the record holds %q:\n%s", secret, raw)
		}
	}
	j := diagnose.LoadLastJob(dir)
	if j == nil {
		t.Fatalf("the record does not load:\n%s", raw)
	}
	if j.Model != "tiny-model.cmf" || j.Width != 64 || j.Steps != 2 {
		t.Errorf("record: model %q, %dx%d, %d steps", j.Model, j.Width, j.Height, j.Steps)
	}
	var stageGPU float64
	stages := map[string]bool{}
	for _, s := range j.Stages {
		stages[s.Stage] = true
		stageGPU += s.DeviceSeconds
		if s.PeakBytes <= 0 {
			t.Errorf("stage %s has no peak memory", s.Stage)
		}
	}
	for _, want := range []pipeline.Stage{pipeline.StageEncodingPrompt, pipeline.StagePrefill, pipeline.StageDenoising, pipeline.StageDecoding} {
		if !stages[want.String()] {
			t.Errorf("no record of stage %q: %+v", want, j.Stages)
		}
	}
	if j.PeakMemoryMethod == "" {
		t.Error("the record does not say how peak memory was measured")
	}
	if j.ClassesAre != "GPU, sampled" {
		t.Errorf("per-class times are %q, want the GPU's, sampled", j.ClassesAre)
	}
	var classGPU float64
	for _, c := range []string{"gemm", "attn", "norm", "rope", "act", "conv", "copy"} {
		if j.Classes[c] <= 0 {
			t.Errorf("no GPU time for class %s: %v", c, j.Classes)
		}
	}
	for _, s := range j.Classes {
		classGPU += s
	}
	if math.Abs(classGPU-stageGPU) > 1e-6 {
		t.Errorf("the classes add up to %.9f s of GPU time, the stages to %.9f s", classGPU, stageGPU)
	}
	if len(j.Notices) == 0 {
		t.Error("the record has none of the run's notices (where the networks ran)")
	}
	text := diagnose.Build(diagnose.Options{Dir: dir}).Text()
	for _, want := range []string{"last job", "time per kernel class (GPU, sampled)", "peak memory", "tiny-model.cmf"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report does not say %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "private-folder") || strings.Contains(text, prompt) {
		t.Errorf("the report shows the folder or the prompt:\n%s", text)
	}
	if len(j.Recoveries) != 0 {
		t.Errorf("an unfaulted job recorded recoveries: %+v", j.Recoveries)
	}

	// A job whose command buffers the GPU's watchdog stops (injected) is retried in shorter ones:
	// the record lists the recovery.
	t.Setenv(emu.FaultEnv, "watchdog")
	faulted := &ModelGenerator{Path: model, Backend: backend.Emulator, DiagnosticsDir: dir}
	defer faulted.Close()
	q2 := New(faulted, rec.notify)
	defer q2.Close()
	if _, err := q2.Submit(pipeline.Request{Prompt: prompt, Width: 64, Height: 64, Steps: 2, Seed: 7}, "watchdog"); err != nil {
		t.Fatal(err)
	}
	if j := <-rec.finished; j.State != Done {
		t.Fatalf("the watchdog job ended %v: %v", j.State, j.Err)
	}
	j = diagnose.LoadLastJob(dir)
	found := false
	for _, r := range j.Recoveries {
		found = found || (r.Kind == pipeline.RecoveryTimeout && r.Count > 0)
	}
	if !found {
		t.Errorf("the record of a job the watchdog stopped lists no timeout recovery: %+v", j.Recoveries)
	}
	if text := diagnose.Build(diagnose.Options{Dir: dir}).Text(); !strings.Contains(text, "recovery: timeout") {
		t.Errorf("the report does not list the recovery:\n%s", text)
	}
}
