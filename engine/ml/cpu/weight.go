package cpu

import (
	"fmt"

	"easel/engine/quant"
)

// checkWeight verifies that a weight is 2-D-viewable and its payload has the codec's exact size.
func checkWeight(op string, w *quant.Tensor) error {
	if w == nil {
		return fmt.Errorf("cpu.%s: weight is nil", op)
	}
	want, ok := quant.PayloadSize(w.DType, w.Shape)
	if !ok {
		return fmt.Errorf("cpu.%s: weight %q: codec %v cannot hold shape %v", op, w.Name, w.DType, w.Shape)
	}
	if int64(len(w.Data)) != want {
		return fmt.Errorf("cpu.%s: weight %q (%v %v) has %d payload bytes, want %d: the model file is damaged or was written by a different converter", op, w.Name, w.DType, w.Shape, len(w.Data), want)
	}
	return nil
}
