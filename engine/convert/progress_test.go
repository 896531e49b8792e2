package convert

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Progress counts every tensor and every byte read, ends at its totals and never passes them.
func TestProgressReachesItsTotals(t *testing.T) {
	var last Progress
	calls := 0
	_, err := Convert(context.Background(), tinySnapshot(t), filepath.Join(t.TempDir(), "p.cmf"), Options{Progress: func(p Progress) {
		calls++
		if p.TensorsDone < last.TensorsDone || p.BytesDone < last.BytesDone || p.BytesDone > p.BytesTotal || p.TensorsDone > p.TensorsTotal {
			t.Errorf("progress went from %+v to %+v", last, p)
		}
		last = p
	}})
	if err != nil {
		t.Fatal(err)
	}
	if last.TensorsDone != last.TensorsTotal || last.BytesDone != last.BytesTotal || last.TensorsTotal != 329 { // 328 before the final norm was kept (te.norm.weight)
		t.Errorf("last progress %+v, want every tensor and byte done", last)
	}
	if calls < 300 {
		t.Errorf("%d progress reports for 329 tensors", calls)
	}
	p := Progress{BytesDone: 25, BytesTotal: 100, Elapsed: time.Second}
	if p.ETA() != 3*time.Second {
		t.Errorf("ETA at a quarter after 1 s = %v, want 3 s", p.ETA())
	}
}

// The estimate matches what the conversion reads and bounds what it writes.
func TestEstimateBoundsTheConversion(t *testing.T) {
	for _, p := range Profiles {
		est, err := EstimateConversion(tinySnapshot(t), Options{Profile: p})
		if err != nil {
			t.Fatal(err)
		}
		_, res := convertTiny(t, p)
		if est.Tensors != res.Tensors || est.SourceBytes != res.SourceBytes || est.OutputBytes < res.FileBytes {
			t.Errorf("%s: estimate %+v, result %d tensors, %d source bytes, %d file bytes", p, est, res.Tensors, res.SourceBytes, res.FileBytes)
		}
	}
	if _, err := EstimateConversion(t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "model_index.json is missing") {
		t.Errorf("estimating an empty folder: %v", err)
	}
}
