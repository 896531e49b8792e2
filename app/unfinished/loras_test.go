package unfinished

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/checkpoint"
	"easel/app/compose"
	"easel/app/settings"
	"easel/engine/pipeline"
)

// TestLoRAsRecordedAndChecked: a window job's checkpoint records its enabled LoRA files by
// SHA-256 and strength; resuming it with the same files works, and after one file's bytes changed
// (or it is gone) the resume is refused with a sentence naming it, and the job stays kept.
func TestLoRAsRecordedAndChecked(t *testing.T) {
	dir := t.TempDir()
	styleA := filepath.Join(dir, "style-a.safetensors")
	styleB := filepath.Join(dir, "style-b.safetensors")
	os.WriteFile(styleA, []byte("the first LoRA's bytes"), 0o644)
	os.WriteFile(styleB, []byte("the second LoRA's bytes"), 0o644)
	d := compose.NewDraft(settings.Settings{})
	d.Prompt, d.Size, d.CustomW, d.CustomH, d.Steps, d.Model = "a fox", compose.SizeExact, 64, 64, 3, filepath.Join(dir, "model.cmf")
	d.LoRAs = []compose.LoRA{{Path: styleA, Enabled: true, Strength: 0.8}, {Path: styleB, Enabled: false, Strength: 1}}

	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	k, err := s.Add(d, 7, "a fox", "")
	if err != nil {
		t.Fatal(err)
	}
	job, err := d.Job(7)
	if err != nil {
		t.Fatal(err)
	}
	k.OnStep(&job.Request, "fp")(pipeline.StepState{Image: 0, Images: 1, Step: 1, Steps: 3,
		Sigmas: []float32{1, 0.6, 0.3, 0}, Latents: []float32{0.5, -0.25, 1, 2}})
	k.Writer().Wait()

	left, err := s.List()
	if err != nil || len(left) != 1 || left[0].Checkpoint == nil {
		t.Fatalf("kept: %v, %v", left, err)
	}
	rec := left[0].Checkpoint.LoRAs
	want, _ := checkpoint.FileSHA256(styleA)
	if len(rec) != 1 || rec[0].Path != styleA || rec[0].SHA256 != want || rec[0].Strength != 0.8 {
		t.Fatalf("recorded LoRAs: %+v (want only %s, sha256 %s, strength 0.8)", rec, styleA, want)
	}
	if _, _, err := left[0].Job("fp"); err != nil {
		t.Fatalf("the same LoRAs: %v", err)
	}

	// Another LoRA enabled too: refused.
	left[0].Draft.LoRAs[1].Enabled = true
	if _, _, err := left[0].Job("fp"); !errors.Is(err, checkpoint.ErrOther) || !strings.Contains(err.Error(), "2 are applied now") {
		t.Errorf("an extra LoRA: %v", err)
	}
	left[0].Draft.LoRAs[1].Enabled = false
	// The file's bytes changed: refused, naming it.
	os.WriteFile(styleA, []byte("retrained: other bytes"), 0o644)
	if _, _, err := left[0].Job("fp"); !errors.Is(err, checkpoint.ErrOther) || !strings.Contains(err.Error(), "style-a.safetensors") {
		t.Errorf("a changed LoRA: %v", err)
	}
	// The file is gone: refused, naming it.
	os.Remove(styleA)
	if _, _, err := left[0].Job("fp"); !errors.Is(err, checkpoint.ErrOther) || !strings.Contains(err.Error(), "style-a.safetensors") {
		t.Errorf("a missing LoRA: %v", err)
	}
	if again, _ := s.List(); len(again) != 1 || again[0].Checkpoint == nil {
		t.Errorf("the refused job is no longer kept: %v", again)
	}
}
