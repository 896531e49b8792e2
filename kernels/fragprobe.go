package kernels

import "fmt"

// FragProbeLen is the number of floats qi_fragprobe writes to its buffer.
const FragProbeLen = 192

// FragCoord is where the assumed simdgroup 8×8 fragment layout puts lane's two elements:
// (row, col) and (row, col+1).
func FragCoord(lane int) (row, col int) {
	return 4*((lane>>4)&1) + ((lane >> 1) & 3), 4*((lane>>3)&1) + 2*(lane&1)
}

// CheckFragLayout reads qi_fragprobe's output and returns an error unless the device's
// simdgroup_load and simdgroup_store place elements where the GEMM and flash epilogues assume
// (FragCoord). The backend runs the probe once and declines the device on an error.
func CheckFragLayout(out []float32) error {
	if len(out) < FragProbeLen {
		return fmt.Errorf("fragment probe: %d floats, want %d", len(out), FragProbeLen)
	}
	for lane := 0; lane < 32; lane++ {
		r, c := FragCoord(lane)
		for e := 0; e < 2; e++ {
			want := float32(8*r + c + e)
			if got := out[4*lane+e]; got != want || out[4*lane+2+e] != want {
				return fmt.Errorf("the simdgroup fragment layout differs from the one the kernels assume: lane %d holds element %v after simdgroup_load, the kernels expect %v", lane, got, want)
			}
			if got := out[128+8*r+c+e]; got != float32(2*lane+e) {
				return fmt.Errorf("the simdgroup fragment layout differs from the one the kernels assume: simdgroup_store put value %v at (%d,%d), the kernels expect lane %d's element %d", got, r, c+e, lane, e)
			}
		}
	}
	return nil
}
