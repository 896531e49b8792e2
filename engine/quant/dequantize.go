package quant

import "fmt"

// DequantizeRows decodes rows r0..r1 of t, viewed as [Rows(), Cols()], into
// dst[:(r1−r0)·Cols()] as float32, reading only those rows' bytes (and, for q8_2f, the column
// field; for q4tp, those rows' params and codes). It allocates nothing and is safe to call from
// many goroutines at once on the same tensor. t may hold f32, f16, bf16, q8_row, q8_2f or q4tp.
func DequantizeRows(t *Tensor, r0, r1 int, dst []float32) error {
	if err := checkDecodable(t); err != nil {
		return err
	}
	rows, cols := t.Rows(), t.Cols()
	if r0 < 0 || r0 > r1 || r1 > rows {
		return fmt.Errorf("dequantize %q: rows %d..%d are outside its %d rows", t.Name, r0, r1, rows)
	}
	n := (r1 - r0) * cols
	if len(dst) < n {
		return fmt.Errorf("dequantize %q rows %d..%d: dst holds %d values, %d needed", t.Name, r0, r1, len(dst), n)
	}
	switch t.DType {
	case F32, F16, BF16:
		dequantizeFloat(t.DType, t.Data, r0*cols, dst[:n])
	case Q8Row:
		dequantizeQ8Row(t.Data, rows, cols, r0, r1, dst)
	case Q8_2F:
		dequantizeQ8_2F(t.Data, rows, cols, r0, r1, dst)
	case Q4TP:
		dequantizeQ4TP(t.Data, rows, cols, r0, r1, dst)
	}
	return nil
}

// Dequantize decodes the whole tensor into a new float32 slice of Rows()·Cols() values.
func Dequantize(t *Tensor) ([]float32, error) {
	if err := checkDecodable(t); err != nil {
		return nil, err
	}
	dst := make([]float32, t.Rows()*t.Cols())
	if err := DequantizeRows(t, 0, t.Rows(), dst); err != nil {
		return nil, err
	}
	return dst, nil
}

// checkDecodable reports whether t's dtype is one Easel decodes and its payload has exactly the
// size its dtype and shape call for.
func checkDecodable(t *Tensor) error {
	switch t.DType {
	case F32, F16, BF16, Q8Row, Q8_2F, Q4TP:
	default:
		return fmt.Errorf("dequantize %q: dtype %v cannot be decoded to float32 (Easel decodes f32, f16, bf16, q8_row, q8_2f and q4tp)", t.Name, t.DType)
	}
	size, ok := PayloadSize(t.DType, t.Shape)
	if !ok {
		return fmt.Errorf("dequantize %q: %w", t.Name, shapeError(t.DType, t.Shape))
	}
	if int64(len(t.Data)) != size {
		return fmt.Errorf("dequantize %q: %v payload of shape %v is %d bytes, it should be %d: the file is damaged or was written by an incompatible tool", t.Name, t.DType, t.Shape, len(t.Data), size)
	}
	return nil
}
