package quant

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// Tiny payloads built by hand from the byte layouts of cmf.md §9, with the values the formulas
// give worked out by hand.

func le16(vs ...uint16) []byte {
	b := make([]byte, 2*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint16(b[2*i:], v)
	}
	return b
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func i8(vs ...int8) []byte {
	b := make([]byte, len(vs))
	for i, v := range vs {
		b[i] = byte(v)
	}
	return b
}

func decodeAll(t *testing.T, tn *Tensor) []float32 {
	t.Helper()
	got, err := Dequantize(tn)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func expectValues(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s[%d] = %g, want %g", what, i, got[i], want[i])
		}
	}
}

func TestDecodeHandmadeQ8Row(t *testing.T) {
	// rows 2, cols 3; scales 0.5 (0x3800) and 2 (0x4000).
	data := cat(i8(1, -2, 127, -128, 0, 5), le16(0x3800, 0x4000))
	got := decodeAll(t, &Tensor{Name: "q8row", DType: Q8Row, Shape: []int{2, 3}, Data: data})
	expectValues(t, "q8_row", got, []float32{0.5, -1, 63.5, -256, 0, 10})
}

func TestDecodeHandmadeQ8_2F(t *testing.T) {
	// rows 2, cols 2; row scales 0.5, 2; column field 0.25 (0x3400), 3 (0x4200).
	data := cat(i8(2, -3, 4, 1), le16(0x3800, 0x4000), le16(0x3400, 0x4200))
	got := decodeAll(t, &Tensor{Name: "q82f", DType: Q8_2F, Shape: []int{2, 2}, Data: data})
	expectValues(t, "q8_2f", got, []float32{2 * 0.5 * 0.25, -3 * 0.5 * 3, 4 * 2 * 0.25, 1 * 2 * 3})
}

func TestDecodeHandmadeQ4TP(t *testing.T) {
	// rows 2, cols 64: two tiles a row, code stride ceil(2·5/8) = 2 bytes.
	// Row 0: lo = −2 (0xc000), step = 1 (0x3c00), so scale(c) = 2^(c−2); tile 0 code 5 (scale 8),
	// tile 1 code 31 (scale 2^29). Codes bits: 5 at [0,5), 31 at [5,10) → bytes 0xe5, 0x03.
	// Row 1: lo = 0, step = 0: every rung is 1; codes 17 and 2 → bits 0b00010_10001 → 0x51, 0x00.
	// Tile bytes: byte k = k | (15−k)<<4, so weight 2k is (k−8)·s and weight 2k+1 is (7−k)·s.
	tile := make([]byte, 16)
	for k := range tile {
		tile[k] = byte(k) | byte(15-k)<<4
	}
	data := cat(tile, tile, tile, tile, le16(0xc000, 0x3c00, 0x0000, 0x0000), []byte{0xe5, 0x03, 0x51, 0x00})
	tn := &Tensor{Name: "q4tp", DType: Q4TP, Shape: []int{2, 64}, Data: data}
	if size, _ := PayloadSize(Q4TP, tn.Shape); int(size) != len(data) {
		t.Fatalf("hand-built payload is %d bytes, PayloadSize says %d", len(data), size)
	}
	got := decodeAll(t, tn)
	want := make([]float32, 128)
	scales := []float32{8, float32(math.Ldexp(1, 29)), 1, 1}
	for tileIdx, s := range scales {
		for k := range 16 {
			want[32*tileIdx+2*k] = float32(k-8) * s
			want[32*tileIdx+2*k+1] = float32(7-k) * s
		}
	}
	expectValues(t, "q4tp", got, want)
}

// Every code at every tile position of a long row survives packing and unpacking, and packing
// touches only its own 5 bits.
func TestQ4TPCodePacking(t *testing.T) {
	const gpr = 13 // 65 bits: a stride of 9 bytes, 7 unused tail bits
	stride := (gpr*5 + 7) / 8
	for code := range 32 {
		for g := range gpr {
			codes := make([]byte, stride)
			q4tpPutCode(codes, g, code)
			for h := range gpr {
				want := 0
				if h == g {
					want = code
				}
				if got := q4tpCode(codes, h); got != want {
					t.Fatalf("code %d put at tile %d: tile %d reads %d, want %d", code, g, h, got, want)
				}
			}
		}
	}
}

func TestEncodeHandmadeQ8Row(t *testing.T) {
	// Row 0: absmax 127 → scale 1 exactly; −63.5 is a tie and rounds to even (−64).
	// Row 1: all zero → scale floored at the smallest normal half (0x0400), codes 0.
	w := []float32{127, -63.5, 0.25, 0.5, 0, 0, 0, 0}
	got, err := Encode(Q8Row, []int{2, 4}, w)
	if err != nil {
		t.Fatal(err)
	}
	want := cat(i8(127, -64, 0, 0, 0, 0, 0, 0), le16(0x3c00, 0x0400))
	if !bytes.Equal(got, want) {
		t.Errorf("q8_row payload\n got % x\nwant % x", got, want)
	}
}

func TestEncodeHandmadeQ8_2F(t *testing.T) {
	// Columns: RMS of (2, −2) = 2 (0x4000), of (4, 4) = 4 (0x4400), of (0, 0) → 1e-12, which
	// f16 flushes to 0, floored at 2^-14 (0x0400).
	// Each row divided by the field is (±1, 1, 0): absmax 1, scale f16(1/127) = 1032·2^-17
	// (0x2008), q = rne(1/0.00787353515625) = rne(127.0078) = 127.
	w := []float32{2, 4, 0, -2, 4, 0}
	got, err := Encode(Q8_2F, []int{2, 3}, w)
	if err != nil {
		t.Fatal(err)
	}
	want := cat(i8(127, 127, 0, -127, 127, 0), le16(0x2008, 0x2008), le16(0x4000, 0x4400, 0x0400))
	if !bytes.Equal(got, want) {
		t.Errorf("q8_2f payload\n got % x\nwant % x", got, want)
	}
}

func TestEncodeHandmadeQ4TP(t *testing.T) {
	// Tile pattern p_j = (j mod 15) − 7: absmax 7, so f16_scale(7/7) = 1 and log2 = 0.
	// Row 0: both tiles are p → lo = hi = 0; step f16(0) = 0 is bumped one ulp to 0x0001;
	// the ladder is 1 everywhere in f32; both codes 0; nibbles p+8.
	// Row 1: tile 0 is p, tile 1 is 1024·p (log2 scale 10) → lo 0, hi 10;
	// step f16(10/31) = 1321·2^-12 gives 31·step = 9.9978 < 10, so it is bumped to 1322·2^-12
	// (0x352a); tile 1's nominal code rne(10/0.32275390625) = rne(30.98) = 31 also wins the
	// neighbour search, and its nibbles are rne(1024·p/1027.9) + 8 = p + 8.
	// Codes row 1: 0 at [0,5), 31 at [5,10) → 0xe0, 0x03.
	w := make([]float32, 128)
	for j := range 32 {
		p := float32(j%15 - 7)
		w[j], w[32+j], w[64+j], w[96+j] = p, p, p, 1024*p
	}
	got, err := Encode(Q4TP, []int{2, 64}, w)
	if err != nil {
		t.Fatal(err)
	}
	tile := make([]byte, 16)
	for k := range tile {
		tile[k] = byte((2*k)%15-7+8) | byte((2*k+1)%15-7+8)<<4
	}
	want := cat(tile, tile, tile, tile, le16(0x0000, 0x0001, 0x0000, 0x352a), []byte{0x00, 0x00, 0xe0, 0x03})
	if !bytes.Equal(got, want) {
		t.Errorf("q4tp payload\n got % x\nwant % x", got, want)
	}
}
