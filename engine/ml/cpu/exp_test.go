package cpu

import (
	"math"
	"testing"
)

// TestExp32 compares exp32 with math.Exp over the softmax range in small steps.
func TestExp32(t *testing.T) {
	worst := 0.0
	for x := -87.0; x <= 0; x += 0.00731 {
		want := math.Exp(float64(float32(x)))
		got := float64(exp32(float32(x)))
		worst = math.Max(worst, math.Abs(got-want)/want)
	}
	if worst > 3e-7 {
		t.Errorf("worst relative error %.3g", worst)
	}
	if exp32(-100) > 2e-38 || exp32(0) != 1 {
		t.Errorf("exp32(-100) = %v, exp32(0) = %v", exp32(-100), exp32(0))
	}
}

// TestSiLU compares silu with the float64 definition across the float32 range that matters.
func TestSiLU(t *testing.T) {
	for x := -120.0; x <= 120; x += 0.0173 {
		v := float64(float32(x))
		want := v / (1 + math.Exp(-v))
		got := float64(silu(float32(x)))
		// exp32 flushes e^x below 2^-126 to zero, so results under ~1e-34 may be 0
		if d := math.Abs(got - want); d > 4e-7*math.Abs(want)+1e-34 {
			t.Fatalf("silu(%v) = %v, want %v", v, got, want)
		}
	}
}
