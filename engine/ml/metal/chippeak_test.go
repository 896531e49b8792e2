package metal

import "testing"

func TestPeakTFLOPS(t *testing.T) {
	for name, want := range map[string]float64{
		"Apple M4": 3.58, "Apple M4 Pro": 9.2, "Apple M4 Max": 14.1, "Apple M1": 2.6, "Apple M2 Ultra": 27.2,
		"Apple M3 Max": 0, "Apple M5": 0, "Metal emulator (kernels/emu, clang)": 0, "Apple M40": 0,
	} {
		if got := PeakTFLOPS(name); got != want {
			t.Errorf("PeakTFLOPS(%q) = %v, want %v", name, got, want)
		}
	}
}
