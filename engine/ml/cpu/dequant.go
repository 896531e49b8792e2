package cpu

import (
	"encoding/binary"
	"fmt"
	"math"

	"easel/engine/quant"
	"easel/engine/safetensors"
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

// dequantizeRows writes rows [r0, r1) of w (viewed as [Rows, Cols]) as float32 into dst.
func dequantizeRows(w *quant.Tensor, r0, r1 int, dst []float32) error {
	cols := w.Cols()
	n := (r1 - r0) * cols
	if r0 < 0 || r1 > w.Rows() || r0 > r1 || len(dst) < n {
		return fmt.Errorf("dequantize %q: rows [%d, %d) of %d into %d floats", w.Name, r0, r1, w.Rows(), len(dst))
	}
	dst = dst[:n]
	switch w.DType {
	case quant.F32:
		src := w.Data[4*r0*cols : 4*r1*cols]
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case quant.BF16:
		src := w.Data[2*r0*cols : 2*r1*cols]
		for i := range dst {
			dst[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(src[2*i:])) << 16)
		}
	case quant.F16:
		src := w.Data[2*r0*cols : 2*r1*cols]
		for i := range dst {
			dst[i] = safetensors.HalfToFloat32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	default:
		return fmt.Errorf("dequantize %q: codec %v is not decoded by the CPU backend yet", w.Name, w.DType)
	}
	return nil
}
