package qi21metal

import "testing"

func TestPow2(t *testing.T) {
	for e, want := range map[int]float32{0: 1, 3: 8, -2: 0.25, 14: 16384, -14: 1.0 / 16384} {
		if got := pow2(e); got != want {
			t.Errorf("pow2(%d) = %v, want %v", e, got, want)
		}
	}
}
