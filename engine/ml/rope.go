package ml

import (
	"fmt"
	"math"
)

// RopeTable builds the cos and sin tables [rows, Σ axesDims/2] of a multi-axis rotary embedding
// on the host: for axis a of rotary width d = axesDims[a] and j = 0..d/2−1, the angle is
// pos[row][a] · θ^(−2j/d); the axes' angles are concatenated in order. The arithmetic follows the
// float32 reference (inverse frequencies and angles rounded to float32, as torch computes them).
// positions holds one entry per row with len(axesDims) coordinates.
func RopeTable(positions [][]int, axesDims []int, theta float64) (cos, sin []float32, err error) {
	half := 0
	for a, d := range axesDims {
		if d <= 0 || d%2 != 0 {
			return nil, nil, fmt.Errorf("rope table: axis %d has rotary width %d; it must be positive and even", a, d)
		}
		half += d / 2
	}
	invFreq := make([]float32, 0, half)
	for _, d := range axesDims {
		for j := 0; j < d/2; j++ {
			e := float32(2*j) / float32(d)
			invFreq = append(invFreq, 1/float32(math.Pow(theta, float64(e))))
		}
	}
	cos = make([]float32, len(positions)*half)
	sin = make([]float32, len(positions)*half)
	for r, pos := range positions {
		if len(pos) != len(axesDims) {
			return nil, nil, fmt.Errorf("rope table: row %d has %d coordinates, want %d (one per axis)", r, len(pos), len(axesDims))
		}
		k := 0
		for a, d := range axesDims {
			p := float32(pos[a])
			for j := 0; j < d/2; j++ {
				angle := p * invFreq[k]
				cos[r*half+k] = float32(math.Cos(float64(angle)))
				sin[r*half+k] = float32(math.Sin(float64(angle)))
				k++
			}
		}
	}
	return cos, sin, nil
}
