package seed

import "testing"

// TestMT19937StandardCheckValue: the C++ standard ([rand.predef]) requires the 10000th output of
// a default-constructed std::mt19937 (seed 5489) to be 4123659995; torch's engine is the same.
func TestMT19937StandardCheckValue(t *testing.T) {
	var m mt19937
	m.seed(5489)
	var v uint32
	for range 10000 {
		v = m.uint32()
	}
	if v != 4123659995 {
		t.Errorf("10000th output %d, want 4123659995", v)
	}
}

// TestSeedUsesLow32Bits: torch truncates the seed to 32 bits before seeding the engine.
func TestSeedUsesLow32Bits(t *testing.T) {
	tests := []struct{ a, b uint64 }{{11, 11 + 1<<32}, {0, 1 << 40}, {42, 42 | 0xffffffff00000000}}
	for _, tc := range tests {
		ga, gb := NewGenerator(tc.a), NewGenerator(tc.b)
		for i := range 4 {
			if x, y := ga.mt.uint32(), gb.mt.uint32(); x != y {
				t.Errorf("seeds %#x and %#x: word %d differs (%d, %d)", tc.a, tc.b, i, x, y)
			}
		}
	}
}
