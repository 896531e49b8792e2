package quant

import (
	"fmt"
	"testing"
)

// BenchmarkDequantizeRows decodes a [4096, 4096] weight in 64-row tiles, as the CPU GEMM does,
// on one core. MB/s is of payload bytes; "Mweights/s" is decoded weights per second.
//
//	go test ./engine/quant -run '^$' -bench DequantizeRows -count 5
func BenchmarkDequantizeRows(b *testing.B) {
	const rows, cols, tile = 4096, 4096, 64
	w := gaussian(1, rows, cols, 0.02)
	for _, d := range []DType{Q4TP, Q8_2F, Q8Row, BF16, F16} {
		payload, err := Encode(d, []int{rows, cols}, w)
		if err != nil {
			b.Fatal(err)
		}
		tn := &Tensor{Name: "w", DType: d, Shape: []int{rows, cols}, Data: payload}
		dst := make([]float32, tile*cols)
		b.Run(d.String(), func(b *testing.B) {
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			for b.Loop() {
				for r0 := 0; r0 < rows; r0 += tile {
					if err := DequantizeRows(tn, r0, r0+tile, dst); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(rows*cols)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mweights/s")
		})
	}
}

// BenchmarkEncode quantizes a [4096, 4096] float32 matrix on all cores; MB/s is of float32 input.
//
//	go test ./engine/quant -run '^$' -bench Encode -count 3
func BenchmarkEncode(b *testing.B) {
	const rows, cols = 4096, 4096
	w := gaussian(1, rows, cols, 0.02)
	for _, d := range []DType{Q4TP, Q8_2F, Q8Row, BF16, F16} {
		b.Run(fmt.Sprint(d), func(b *testing.B) {
			b.SetBytes(4 * rows * cols)
			for b.Loop() {
				if _, err := Encode(d, []int{rows, cols}, w); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
