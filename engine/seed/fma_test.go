package seed

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactFMA32 is a·b + c computed exactly and rounded once to float32 (nearest even).
func exactFMA32(a, b, c float32) float32 {
	p := new(big.Float).SetPrec(400).SetFloat64(float64(a))
	p.Mul(p, new(big.Float).SetPrec(400).SetFloat64(float64(b)))
	p.Add(p, new(big.Float).SetPrec(400).SetFloat64(float64(c)))
	f, _ := p.Float32()
	return f
}

func TestFMA32RoundsOnce(t *testing.T) {
	tests := []struct{ a, b, c float32 }{
		{1, 1, 0},
		{-0.0, 1, 0},
		{1 + 0x1p-23, 1 + 0x1p-23, -1},       // product needs 47 bits
		{1 + 0x1p-12, 1 + 0x1p-12, 0x1p-100}, // tie broken by a far-away addend
		{1 + 0x1p-12, 1 + 0x1p-12, -0x1p-100},
		{3, 0x1p-80, 1},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		exp := func() float32 { return float32(math.Ldexp(1, r.IntN(60)-30)) }
		tests = append(tests, struct{ a, b, c float32 }{
			(r.Float32() - 0.5) * exp(), (r.Float32() - 0.5) * exp(), (r.Float32() - 0.5) * exp(),
		})
	}
	for _, tc := range tests {
		got, want := fma32(tc.a, tc.b, tc.c), exactFMA32(tc.a, tc.b, tc.c)
		if math.Float32bits(got) != math.Float32bits(want) && !(got == 0 && want == 0) {
			t.Errorf("fma32(%g, %g, %g) = %g, exact rounding %g", tc.a, tc.b, tc.c, got, want)
		}
	}
}
