package seed

import "math"

// fma32 is a·b + c rounded once to float32, as the vfmadd instructions the reference kernel ran.
//
// a·b is exact in float64 (48 significant bits); the float64 sum is rounded to odd — on an
// inexact sum the last bit is forced to 1 towards the true value — so the final rounding to
// float32 is the single correct rounding (53 ≥ 24 + 2 bits make round-to-odd sufficient).
func fma32(a, b, c float32) float32 {
	p := float64(float64(a) * float64(b)) // exact; the conversion also forbids fusing it below
	s := p + float64(c)
	// Two-sum: err is exactly (p + c) − s.
	bb := s - p
	err := (p - (s - bb)) + (float64(c) - bb)
	if bits := math.Float64bits(s); err != 0 && bits&1 == 0 {
		// s ≠ 0 here (a zero sum is exact); step one ulp towards the true value.
		if (err > 0) == (s > 0) {
			bits++
		} else {
			bits--
		}
		s = math.Float64frombits(bits)
	}
	return float32(s)
}
