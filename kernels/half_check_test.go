package kernels_test

import (
	"math"
	"testing"
)

func TestHalfHelpersRoundTrip(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		v := halfToFloat64(uint16(h))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if got := float64ToHalf(v); got != uint16(h) && !(v == 0 && got&0x7fff == 0) {
			t.Fatalf("half %#04x -> %v -> %#04x", h, v, got)
		}
	}
	if got := halfToFloat64(float64ToHalf(1 + math.Ldexp(1, -11))); got != 1 { // tie goes to even
		t.Errorf("1+2^-11 rounds to %v, want 1", got)
	}
}
