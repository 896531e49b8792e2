package cpu

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"easel/engine/ml"
	"easel/engine/mmapfile"
	"easel/engine/quant"
)

// A linear layer whose weights are read from a mapping truncated under it (a model file on a
// drive that went away) faults in the worker goroutines that dequantize the tiles; the fault comes
// back to the caller's goroutine as the *mmapfile.FaultError, on every threading path: tiles per
// core (one-thread BLAS), rows per core (a one-row input with multi-threaded BLAS), and the
// pipelined tile decoder (a tall input with multi-threaded BLAS).
func TestLinearOverATruncatedMappingFaultsIntoAnError(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // several workers even on a small machine
	const rows, cols = 256, 64                      // f32: 64 KiB, sixteen pages
	path := filepath.Join(t.TempDir(), "weights.bin")
	if err := os.WriteFile(path, make([]byte, rows*cols*4), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := mmapfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := os.Truncate(path, 4096); err != nil { // only the first 16 rows remain
		t.Fatal(err)
	}
	w := &quant.Tensor{Name: "w", DType: quant.F32, Shape: []int{rows, cols}, Data: m.Bytes()}
	inBothModes(t, func(t *testing.T) {
		for _, n := range []int{1, pipelineMinRows} {
			b := New()
			b.tileRows = 32 // eight tiles
			x, err := b.Upload(make([]float32, n*cols), n, cols)
			if err != nil {
				t.Fatal(err)
			}
			dst, err := b.New(n, rows)
			if err != nil {
				t.Fatal(err)
			}
			err = guardedLinear(b, dst, x, w)
			var fault *mmapfile.FaultError
			if !errors.As(err, &fault) || fault.Path != path || fault.Now != 4096 {
				t.Errorf("%d input rows: Linear returned %v (%T), want a fault in %s", n, err, err, path)
			}
		}
	})
}

// guardedLinear runs Linear as a job's goroutine does: faults on, recovered into the error.
func guardedLinear(b *Backend, dst, x ml.Tensor, w *quant.Tensor) (err error) {
	defer mmapfile.Recover(&err)
	defer mmapfile.Guard()()
	return b.Linear(dst, x, w)
}
