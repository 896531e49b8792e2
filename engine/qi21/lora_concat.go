package qi21

import (
	"fmt"

	"easel/engine/quant"
)

// Concatenating LoRA factors of several files: kept in their codec (f32, f16, bf16) when all
// agree, else widened to f32.

func commonFloatDType(ts []*quant.Tensor) (quant.DType, int, error) {
	d := ts[0].DType
	for _, t := range ts {
		switch t.DType {
		case quant.F32, quant.F16, quant.BF16:
		default:
			return 0, 0, fmt.Errorf("qi21: LoRA factor %q is %v; factors must be f32, f16 or bf16", t.Name, t.DType)
		}
		if t.DType != d {
			d = quant.F32
		}
	}
	if d == quant.F32 {
		return d, 4, nil
	}
	return d, 2, nil
}

// asCodec returns t's payload in codec d (a copy when it has to convert).
func asCodec(t *quant.Tensor, d quant.DType) ([]byte, error) {
	if t.DType == d {
		return t.Data, nil
	}
	v, err := quant.Dequantize(t)
	if err != nil {
		return nil, err
	}
	return quant.Encode(d, t.Shape, v)
}

// concatRows stacks [r_i, in] matrices into [Σr_i, in].
func concatRows(name string, ts []*quant.Tensor) (*quant.Tensor, error) {
	d, _, err := commonFloatDType(ts)
	if err != nil {
		return nil, err
	}
	rows, cols := 0, ts[0].Cols()
	var data []byte
	for _, t := range ts {
		b, err := asCodec(t, d)
		if err != nil {
			return nil, err
		}
		data = append(data, b...)
		rows += t.Rows()
	}
	return &quant.Tensor{Name: name, DType: d, Shape: []int{rows, cols}, Data: data}, nil
}

// concatCols places [out, r_i] matrices side by side into [out, Σr_i].
func concatCols(name string, ts []*quant.Tensor) (*quant.Tensor, error) {
	d, size, err := commonFloatDType(ts)
	if err != nil {
		return nil, err
	}
	rows, total := ts[0].Rows(), 0
	parts := make([][]byte, len(ts))
	for i, t := range ts {
		if parts[i], err = asCodec(t, d); err != nil {
			return nil, err
		}
		total += t.Cols()
	}
	data := make([]byte, 0, rows*total*size)
	for r := 0; r < rows; r++ {
		for i, t := range ts {
			w := t.Cols() * size
			data = append(data, parts[i][r*w:(r+1)*w]...)
		}
	}
	return &quant.Tensor{Name: name, DType: d, Shape: []int{rows, total}, Data: data}, nil
}
