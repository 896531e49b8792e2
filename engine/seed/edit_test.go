package seed

import "testing"

// TestEditNoise: the function is SplitMix64's first output for the state (the published first
// output for seed 0, 0xE220A8397B1DCDAF, gives 0x7B1DCDAF), and it moves every seed tried.
func TestEditNoise(t *testing.T) {
	if got := EditNoise(0); got != 0x7B1DCDAF {
		t.Errorf("EditNoise(0) = %#x, want 0x7b1dcdaf", got)
	}
	for s := range uint64(10000) {
		if EditNoise(s) == s || EditNoise(s) > 0xFFFFFFFF {
			t.Fatalf("EditNoise(%d) = %d", s, EditNoise(s))
		}
	}
}
