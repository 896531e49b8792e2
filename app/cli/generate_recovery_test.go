package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"easel/engine/pipeline"
)

// TestGenerateShowsRecoveries: a device's recovery during the run (a notice event carrying its
// record) is a line on stderr, and with --json a "notice" event with the record.
func TestGenerateShowsRecoveries(t *testing.T) {
	rec := &pipeline.Recovery{Kind: pipeline.RecoveryOutOfMemory, Device: "Metal", Network: "the denoiser", Call: "a step", Step: 2, Steps: 8, Count: 1,
		Notice: "Step 2 of 8 on Metal: the GPU ran out of memory; Easel released cached buffers and ran the step again; the image is unaffected."}
	ev := pipeline.Event{Stage: pipeline.StageDenoising, Step: 1, Steps: 8, Notice: rec.Notice, Recovery: rec}

	var stdout, stderr bytes.Buffer
	newGenerateOutput(false, &stdout, &stderr).progress(ev)
	if !strings.Contains(stderr.String(), "easel generate: "+rec.Notice) {
		t.Errorf("stderr %q, want the notice", stderr.String())
	}

	stdout.Reset()
	newGenerateOutput(true, &stdout, &stderr).progress(ev)
	var got jsonEvent
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Stage != "notice" || got.Notice != rec.Notice || got.Recovery == nil || got.Recovery.Kind != pipeline.RecoveryOutOfMemory || got.Recovery.Step != 2 {
		t.Errorf("--json event %s, want a notice with the recovery", stdout.String())
	}
}
