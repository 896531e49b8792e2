package quant

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// gaussian is a seeded rows×cols matrix of N(0, σ²) values.
func gaussian(seed uint64, rows, cols int, sigma float64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	w := make([]float32, rows*cols)
	for i := range w {
		w[i] = float32(rng.NormFloat64() * sigma)
	}
	return w
}

// relRMS is ‖w − ŵ‖ / ‖w‖.
func relRMS(w, got []float32) float64 {
	var num, den float64
	for i, v := range w {
		d := float64(v) - float64(got[i])
		num += d * d
		den += float64(v) * float64(v)
	}
	return math.Sqrt(num / den)
}

var encodable = []DType{F32, F16, BF16, Q8Row, Q8_2F, Q4TP}

// Round trips within each codec's error, with payloads of exactly PayloadSize bytes; the shapes
// include several 256-row encoding blocks and a ragged last block.
func TestRoundTrip(t *testing.T) {
	bound := map[DType]float64{F32: 0, F16: 1e-3, BF16: 4e-3, Q8Row: 0.02, Q8_2F: 0.02, Q4TP: 0.15}
	shapes := [][]int{{1, 32}, {3, 64}, {600, 96}, {257, 320}}
	for _, d := range encodable {
		for _, shape := range shapes {
			w := gaussian(7, shape[0], shape[1], 0.02)
			payload, err := Encode(d, shape, w)
			if err != nil {
				t.Fatalf("%v %v: %v", d, shape, err)
			}
			if size, ok := PayloadSize(d, shape); !ok || int64(len(payload)) != size {
				t.Errorf("%v %v: payload %d bytes, PayloadSize %d (ok %v)", d, shape, len(payload), size, ok)
			}
			got, err := Dequantize(&Tensor{Name: "w", DType: d, Shape: shape, Data: payload})
			if err != nil {
				t.Fatalf("%v %v: %v", d, shape, err)
			}
			if e := relRMS(w, got); e > bound[d] {
				t.Errorf("%v %v: relative RMS error %.4g, bound %.4g", d, shape, e, bound[d])
			}
		}
	}
}

// Values a 16-bit format can hold exactly come back bit for bit, whatever the tensor's rank.
func TestFloatCodecsAreExactOnRepresentableValues(t *testing.T) {
	shape := []int{4, 3, 2, 5}
	w := gaussian(3, 4, 30, 1)
	for _, d := range []DType{F32, F16, BF16} {
		x := make([]float32, len(w))
		for i, v := range w {
			switch d {
			case F16:
				v = HalfToFloat32(Float32ToHalf(v))
			case BF16:
				v = BFloat16ToFloat32(Float32ToBFloat16(v))
			}
			x[i] = v
		}
		payload, err := Encode(d, shape, x)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Dequantize(&Tensor{DType: d, Shape: shape, Data: payload})
		if err != nil {
			t.Fatal(err)
		}
		expectValues(t, d.String(), got, x)
	}
}

// The q8_2f column field is the f16-rounded RMS with squares summed in f64 per block of 256 rows
// and the block totals added in order (cmf.md §9.2); 600 rows make three blocks.
func TestQ8_2FColumnFieldSumsInBlocksOf256Rows(t *testing.T) {
	rows, cols := 600, 40
	w := gaussian(11, rows, cols, 0.05)
	for i := range cols {
		w[i] *= 30 // an outlier input column
	}
	payload, err := Encode(Q8_2F, []int{rows, cols}, w)
	if err != nil {
		t.Fatal(err)
	}
	field := payload[rows*cols+2*rows:]
	for i := range cols {
		total := 0.0
		for b0 := 0; b0 < rows; b0 += 256 {
			block := 0.0
			for r := b0; r < min(b0+256, rows); r++ {
				v := float64(w[r*cols+i])
				block += v * v
			}
			total += block
		}
		rms := float32(math.Max(math.Sqrt(total/float64(rows)), 1e-12))
		want := Float32ToHalf(max32(HalfToFloat32(Float32ToHalf(rms)), smallestNormalHalf))
		if got := uint16(field[2*i]) | uint16(field[2*i+1])<<8; got != want {
			t.Errorf("column %d: field %#04x, want %#04x", i, got, want)
		}
	}
}

// The bytes do not depend on how many cores encode them.
func TestEncodingIsIndependentOfCoreCount(t *testing.T) {
	shape := []int{1100, 64}
	w := gaussian(5, shape[0], shape[1], 0.02)
	for _, d := range []DType{Q8_2F, Q4TP, Q8Row} {
		prev := runtime.GOMAXPROCS(1)
		one, err1 := Encode(d, shape, w)
		runtime.GOMAXPROCS(4)
		four, err4 := Encode(d, shape, w)
		runtime.GOMAXPROCS(prev)
		if err1 != nil || err4 != nil {
			t.Fatal(err1, err4)
		}
		if !bytes.Equal(one, four) {
			t.Errorf("%v: encoding on 1 and on 4 cores differs", d)
		}
	}
}

// rowBytes lists, for a 2-D payload, the byte ranges that belong to row r alone.
func rowBytes(d DType, rows, cols, r int) [][2]int {
	switch d {
	case F32:
		return [][2]int{{4 * r * cols, 4 * (r + 1) * cols}}
	case F16, BF16:
		return [][2]int{{2 * r * cols, 2 * (r + 1) * cols}}
	case Q8Row, Q8_2F:
		return [][2]int{{r * cols, (r + 1) * cols}, {rows*cols + 2*r, rows*cols + 2*r + 2}}
	case Q4TP:
		l := newQ4TPLayout(rows, cols)
		return [][2]int{
			{r * cols / 2, (r + 1) * cols / 2},
			{l.paramsOff + 4*r, l.paramsOff + 4*r + 4},
			{l.codesOff + r*l.codeStride, l.codesOff + (r+1)*l.codeStride},
		}
	}
	return nil
}

// A row range decodes to the same values as the matching slice of a full decode, reads no byte
// of any other row, and writes nothing past its own values.
func TestDequantizeRowsMatchesFullDecode(t *testing.T) {
	rows, cols := 37, 96
	w := gaussian(9, rows, cols, 0.02)
	for _, d := range encodable {
		payload, err := Encode(d, []int{rows, cols}, w)
		if err != nil {
			t.Fatal(err)
		}
		full, err := Dequantize(&Tensor{DType: d, Shape: []int{rows, cols}, Data: payload})
		if err != nil {
			t.Fatal(err)
		}
		for _, rr := range [][2]int{{0, rows}, {0, 1}, {5, 6}, {3, 20}, {36, 37}, {10, 10}} {
			r0, r1 := rr[0], rr[1]
			poisoned := bytes.Clone(payload)
			for r := range rows {
				if r >= r0 && r < r1 {
					continue
				}
				for _, span := range rowBytes(d, rows, cols, r) {
					for i := span[0]; i < span[1]; i++ {
						poisoned[i] = 0xa5
					}
				}
			}
			const sentinel = -12345
			dst := make([]float32, (r1-r0)*cols+3)
			for i := range dst {
				dst[i] = sentinel
			}
			if err := DequantizeRows(&Tensor{DType: d, Shape: []int{rows, cols}, Data: poisoned}, r0, r1, dst); err != nil {
				t.Fatal(err)
			}
			expectValues(t, d.String()+" rows", dst[:(r1-r0)*cols], full[r0*cols:r1*cols])
			expectValues(t, d.String()+" past the rows", dst[(r1-r0)*cols:], []float32{sentinel, sentinel, sentinel})
		}
	}
}

func TestRejectsWhatItCannotHandle(t *testing.T) {
	good, _ := Encode(Q4TP, []int{2, 64}, make([]float32, 128))
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"q4tp cols not a multiple of 32", errOf(Encode(Q4TP, []int{2, 48}, make([]float32, 96))), "multiple of 32"},
		{"q4tp 3-D", errOf(Encode(Q4TP, []int{2, 2, 32}, make([]float32, 128))), "2-D"},
		{"q8_2f 1-D", errOf(Encode(Q8_2F, []int{64}, make([]float32, 64))), "2-D"},
		{"q8_2f no rows", errOf(Encode(Q8_2F, []int{0, 64}, nil)), "non-empty"},
		{"value count", errOf(Encode(Q8Row, []int{2, 4}, make([]float32, 7))), "7 values"},
		{"encode q4_block", errOf(Encode(Q4Block, []int{2, 32}, make([]float32, 64))), "encodes only"},
		{"decode q4tp cols not a multiple of 32", DequantizeRows(&Tensor{Name: "x", DType: Q4TP, Shape: []int{2, 48}, Data: good}, 0, 1, make([]float32, 48)), "multiple of 32"},
		{"decode short payload", DequantizeRows(&Tensor{Name: "x", DType: Q4TP, Shape: []int{2, 64}, Data: good[:len(good)-1]}, 0, 1, make([]float32, 64)), "damaged"},
		{"decode rows out of range", DequantizeRows(&Tensor{Name: "x", DType: Q4TP, Shape: []int{2, 64}, Data: good}, 1, 3, make([]float32, 128)), "outside"},
		{"decode reversed rows", DequantizeRows(&Tensor{Name: "x", DType: Q4TP, Shape: []int{2, 64}, Data: good}, 1, 0, make([]float32, 128)), "outside"},
		{"decode dst too short", DequantizeRows(&Tensor{Name: "x", DType: Q4TP, Shape: []int{2, 64}, Data: good}, 0, 2, make([]float32, 127)), "dst holds"},
		{"decode u8", DequantizeRows(&Tensor{Name: "x", DType: U8, Shape: []int{4}, Data: []byte("{}  ")}, 0, 1, make([]float32, 4)), "cannot be decoded"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, c.err, c.want)
		}
	}
}

func errOf(_ []byte, err error) error { return err }

// The worked sizes of cmf.md §9.3.
func TestQ4TPWorkedSizes(t *testing.T) {
	cases := []struct{ rows, cols, paramsOff, codesOff, stride, size int }{
		{4096, 4096, 8388608, 8404992, 80, 8732672},
		{12288, 4096, 25165824, 25214976, 80, 26198016},
		{4096, 12288, 25165824, 25182208, 240, 26165248},
	}
	for _, c := range cases {
		l := newQ4TPLayout(c.rows, c.cols)
		size, _ := PayloadSize(Q4TP, []int{c.rows, c.cols})
		if l.paramsOff != c.paramsOff || l.codesOff != c.codesOff || l.codeStride != c.stride || size != int64(c.size) {
			t.Errorf("[%d, %d]: layout %+v size %d, want params %d codes %d stride %d size %d",
				c.rows, c.cols, l, size, c.paramsOff, c.codesOff, c.stride, c.size)
		}
	}
}

// Streaming gives the same bytes as encoding into a buffer, across several chunks of rows.
func TestEncodeToStreamsTheSameBytes(t *testing.T) {
	shape := []int{1100, 96}
	w := gaussian(13, shape[0], shape[1], 0.02)
	src := func(r0, r1 int, dst []float32) error {
		copy(dst, w[r0*shape[1]:r1*shape[1]])
		return nil
	}
	prev := runtime.GOMAXPROCS(1) // 256-row chunks: five of them
	defer runtime.GOMAXPROCS(prev)
	for _, d := range encodable {
		want, err := Encode(d, shape, w)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := EncodeTo(&got, d, shape, src); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%v: EncodeTo wrote %d bytes that differ from Encode's %d", d, got.Len(), len(want))
		}
	}
}

type failingWriter struct{ after int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.after -= len(p); f.after < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

// A failing source or destination stops the encoding with its error.
func TestEncodeToStopsOnErrors(t *testing.T) {
	shape := []int{600, 64}
	w := gaussian(3, 600, 64, 0.02)
	good := func(r0, r1 int, dst []float32) error { copy(dst, w[r0*64:r1*64]); return nil }
	bad := func(r0, r1 int, dst []float32) error {
		if r0 > 0 {
			return errors.New("read failed")
		}
		return good(r0, r1, dst)
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	if err := EncodeTo(io.Discard, Q4TP, shape, bad); err == nil || err.Error() != "read failed" {
		t.Errorf("source error: got %v", err)
	}
	if err := EncodeTo(&failingWriter{after: 20000}, Q8_2F, shape, good); err == nil || err.Error() != "disk full" {
		t.Errorf("writer error: got %v", err)
	}
}

// All-zero tiles and rows decode to exactly zero and do not coarsen the live tiles of their row
// (cmf.md §9.3: dead tiles are left out of the row's scale range).
func TestQ4TPZeroTiles(t *testing.T) {
	rows, cols := 3, 128
	w := gaussian(17, rows, cols, 0.02)
	for i := 32; i < 64; i++ {
		w[i] = 0 // row 0, tile 1
	}
	for i := cols; i < 2*cols; i++ {
		w[i] = 0 // row 1
	}
	payload, err := Encode(Q4TP, []int{rows, cols}, w)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := Dequantize(&Tensor{DType: Q4TP, Shape: []int{rows, cols}, Data: payload})
	for i := 32; i < 2*cols; i++ {
		if (i < 64 || i >= cols) && got[i] != 0 {
			t.Fatalf("weight %d of a zero tile decodes to %g", i, got[i])
		}
	}
	// Row 0's live tiles are as accurate as row 2's, which has no dead tile.
	live := append(append([]float32{}, w[:32]...), w[64:cols]...)
	liveGot := append(append([]float32{}, got[:32]...), got[64:cols]...)
	if e0, e2 := relRMS(live, liveGot), relRMS(w[2*cols:], got[2*cols:]); e0 > 1.5*e2 {
		t.Errorf("row with a dead tile: error %.4f on its live tiles, against %.4f for a full row", e0, e2)
	}
}
