package serdejson

import (
	"math"
	"strconv"
	"testing"
)

// The strings serde_json (ryu) produces for these values; the f64 cases appear in cortiq headers
// (rms_norm_eps 1e-6, rope_theta 10000.0) and config tensors, the f32 ones as
// partial_rotary_factor.
func TestFormatFloat(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		bits int
		want string
	}{
		{1e-6, 64, "1e-6"}, {1e-5, 64, "0.00001"}, {10000, 64, "10000.0"}, {5e6, 64, "5000000.0"},
		{0.25, 64, "0.25"}, {1, 64, "1.0"}, {0, 64, "0.0"}, {-2.5, 64, "-2.5"}, {1.5e300, 64, "1.5e300"},
		{1e16, 64, "1e16"}, {1.2345678e-7, 64, "1.2345678e-7"}, {123.456, 64, "123.456"},
		{0.0001, 64, "0.0001"}, {-0.02, 64, "-0.02"}, {123456789012345680000.0, 64, "1.2345678901234568e20"},
		{1, 32, "1.0"}, {0.25, 32, "0.25"}, {0.1, 32, "0.1"}, {1e-6, 32, "0.000001"},
		{1e-7, 32, "1e-7"}, {1e13, 32, "1e13"},
	} {
		if tc.bits == 32 {
			tc.x = float64(float32(tc.x))
		}
		got, err := FormatFloat(tc.x, tc.bits)
		if err != nil || got != tc.want {
			t.Errorf("FormatFloat(%v, %d) = %q, %v; want %q", tc.x, tc.bits, got, err, tc.want)
		}
		if back, err := strconv.ParseFloat(got, tc.bits); err != nil || back != tc.x {
			t.Errorf("%q parses back as %v, %v; want %v", got, back, err, tc.x)
		}
	}
}

func TestFormatFloatRefusesNonFinite(t *testing.T) {
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if s, err := FormatFloat(x, 64); err == nil {
			t.Errorf("FormatFloat(%v) = %q, want an error", x, s)
		}
	}
}
