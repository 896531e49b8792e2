package quant

import (
	"math"
	"testing"
)

func TestHalfToFloat32(t *testing.T) {
	cases := []struct {
		bits uint16
		want float32
	}{
		{0x0000, 0},
		{0x3c00, 1},
		{0xc000, -2},
		{0x3555, 0.333251953125},
		{0x7bff, 65504},
		{0x0400, 6.1035156e-5},                   // smallest normal
		{0x0001, float32(math.Ldexp(1, -24))},    // smallest subnormal
		{0x03ff, float32(math.Ldexp(1023, -24))}, // largest subnormal
		{0x7c00, float32(math.Inf(1))},
		{0xfc00, float32(math.Inf(-1))},
	}
	for _, c := range cases {
		if got := HalfToFloat32(c.bits); got != c.want {
			t.Errorf("HalfToFloat32(%#04x) = %g, want %g", c.bits, got, c.want)
		}
	}
	if v := HalfToFloat32(0x7e00); v == v {
		t.Errorf("HalfToFloat32(0x7e00) = %g, want NaN", v)
	}
}

func TestFloat32ToHalf(t *testing.T) {
	ldexp := func(m float64, e int) float32 { return float32(math.Ldexp(m, e)) }
	cases := []struct {
		name string
		x    float32
		want uint16
	}{
		{"one", 1, 0x3c00},
		{"max", 65504, 0x7bff},
		{"rounds up to inf", 65520, 0x7c00},
		{"overflow", 1e6, 0x7c00},
		{"negative overflow", -1e6, 0xfc00},
		{"tie to even, down", 1 + ldexp(1, -11), 0x3c00},
		{"tie to even, up", 1 + ldexp(3, -11), 0x3c02},
		{"above tie", 1 + ldexp(1, -11) + ldexp(1, -20), 0x3c01},
		{"smallest normal", ldexp(1, -14), 0x0400},
		{"below 2^-25 flushes", ldexp(1, -26), 0x0000},
		{"negative flush keeps sign", -ldexp(1, -26), 0x8000},
		{"[2^-25, 2^-24) rounds up to the smallest subnormal", ldexp(1, -25), 0x0001},
		{"subnormal tie rounds half up (cortiq quirk)", ldexp(2.5, -24), 0x0003},
		{"subnormal tie rounds half up, odd", ldexp(1.5, -24), 0x0002},
		{"subnormal below tie", ldexp(2.4, -24), 0x0002},
		{"inf", float32(math.Inf(-1)), 0xfc00},
		{"nan", float32(math.NaN()), 0x7e00},
	}
	for _, c := range cases {
		if got := Float32ToHalf(c.x); got != c.want {
			t.Errorf("%s: Float32ToHalf(%g) = %#04x, want %#04x", c.name, c.x, got, c.want)
		}
	}
}

// Every finite half survives float32 and back unchanged.
func TestHalfRoundTripsEveryValue(t *testing.T) {
	for h := range 1 << 16 {
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			continue // NaN payloads are canonicalised
		}
		if got := Float32ToHalf(HalfToFloat32(uint16(h))); got != uint16(h) {
			t.Fatalf("half %#04x → %g → %#04x", h, HalfToFloat32(uint16(h)), got)
		}
	}
}

func TestBFloat16(t *testing.T) {
	cases := []struct {
		x    float32
		want uint16
	}{
		{1, 0x3f80},
		{-2, 0xc000},
		{1 + 1.0/256, 0x3f80},        // tie, even stays
		{1 + 3.0/256, 0x3f82},        // tie, odd rounds up
		{1 + 1.0/256 + 1e-6, 0x3f81}, // above the tie
	}
	for _, c := range cases {
		if got := Float32ToBFloat16(c.x); got != c.want {
			t.Errorf("Float32ToBFloat16(%g) = %#04x, want %#04x", c.x, got, c.want)
		}
		if back := BFloat16ToFloat32(c.want); Float32ToBFloat16(back) != c.want {
			t.Errorf("bf16 %#04x does not round-trip", c.want)
		}
	}
}
