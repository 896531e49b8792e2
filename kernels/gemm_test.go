package kernels_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"easel/engine/quant"
	"easel/kernels"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// gemmCase is one y = mul·x·Wᵀ over z weight slices of one shape and codec.
type gemmCase struct {
	codec      quant.DType
	n, rows, k int
	z          int
	halfOut    bool
	mul        float32
	order      emu.FiberOrder
}

func (c gemmCase) String() string {
	out := "f32"
	if c.halfOut {
		out = "f16"
	}
	return fmt.Sprintf("%v/n%d_rows%d_k%d_z%d_%s_order%d", c.codec, c.n, c.rows, c.k, c.z, out, c.order)
}

// decodedWeights is W in float64, decoded from a payload by the test's own reading of cmf.md §9,
// plus the q8 side planes as the backend hands them to the kernel (float32 row scale and column
// field).
type decodedWeights struct {
	w       []float64 // rows×k, exact values of the codec
	rs, col []float32 // q8 only
}

// decodeQ4TP follows cmf.md §9.3: nibble plane, row params {f16 lo, f16 step} (log2 units), 5-bit
// codes LSB-first; w = (nibble − 8)·2^(lo + code·step).
func decodeQ4TP(payload []byte, rows, k int) decodedWeights {
	gpr := k / 32
	paramsOff := rows * gpr * 16
	codesOff := paramsOff + 4*rows
	stride := (gpr*5 + 7) / 8
	w := make([]float64, rows*k)
	for r := 0; r < rows; r++ {
		lo := halfToFloat64(binary.LittleEndian.Uint16(payload[paramsOff+4*r:]))
		step := halfToFloat64(binary.LittleEndian.Uint16(payload[paramsOff+4*r+2:]))
		codes := payload[codesOff+r*stride : codesOff+(r+1)*stride]
		for g := 0; g < gpr; g++ {
			code := 0
			for b := 0; b < 5; b++ {
				bit := 5*g + b
				code |= int(codes[bit/8]>>(bit%8)&1) << b
			}
			scale := math.Exp2(lo + float64(code)*step)
			tile := payload[(r*gpr+g)*16:]
			for i := 0; i < 16; i++ {
				w[r*k+32*g+2*i] = float64(int(tile[i]&15)-8) * scale
				w[r*k+32*g+2*i+1] = float64(int(tile[i]>>4)-8) * scale
			}
		}
	}
	return decodedWeights{w: w}
}

// decodeQ8 follows cmf.md §9.1 and §9.2: int8 codes row-major, f16 row scales, and for q8_2f f16
// column factors; w = q·rs[o]·col[i].
func decodeQ8(payload []byte, rows, k int, twoField bool) decodedWeights {
	d := decodedWeights{w: make([]float64, rows*k), rs: make([]float32, rows), col: make([]float32, k)}
	for i := range d.col {
		d.col[i] = 1
		if twoField {
			d.col[i] = float32(halfToFloat64(binary.LittleEndian.Uint16(payload[rows*k+2*rows+2*i:])))
		}
	}
	for o := 0; o < rows; o++ {
		d.rs[o] = float32(halfToFloat64(binary.LittleEndian.Uint16(payload[rows*k+2*o:])))
		for i := 0; i < k; i++ {
			d.w[o*k+i] = float64(int8(payload[o*k+i])) * float64(d.rs[o]) * float64(d.col[i])
		}
	}
	return d
}

// randomWeights are Gaussian with a per-row and per-column spread, so the codecs' scales differ
// from tile to tile and from column to column.
func randomWeights(rng *rand.Rand, rows, k int) []float32 {
	colSpread := make([]float64, k)
	for i := range colSpread {
		colSpread[i] = math.Exp2(rng.Float64()*3 - 1.5)
	}
	w := make([]float32, rows*k)
	for o := 0; o < rows; o++ {
		rowSpread := 0.02 * math.Exp2(rng.Float64()*4-2)
		for i := 0; i < k; i++ {
			w[o*k+i] = float32(rng.NormFloat64() * rowSpread * colSpread[i])
		}
	}
	return w
}

func TestEmuQuantizedGEMM(t *testing.T) {
	cases := []gemmCase{
		{codec: quant.Q4TP, n: 70, rows: 128, k: 256, z: 1, mul: 0.5},
		{codec: quant.Q4TP, n: 64, rows: 64, k: 96, z: 3, halfOut: true, mul: 1.0 / 16},
		{codec: quant.Q4TP, n: 9, rows: 64, k: 64, z: 2, mul: 4, order: emu.Shuffled},
		{codec: quant.Q8_2F, n: 33, rows: 128, k: 128, z: 2, mul: 1},
		{codec: quant.Q8_2F, n: 64, rows: 64, k: 64, z: 1, halfOut: true, mul: 0.25, order: emu.Reverse},
		{codec: quant.Q8Row, n: 100, rows: 64, k: 160, z: 3, mul: 2},
	}
	for _, c := range cases {
		t.Run(c.String(), func(t *testing.T) { testGEMM(t, c) })
	}
}

func testGEMM(t *testing.T, c gemmCase) {
	d := newDevice(t, c.order)
	fn := "qi_mm_q4tp"
	if c.codec != quant.Q4TP {
		fn = "qi_mm_q8"
	}
	p := pipeline(t, d, "gemm.metal", fn)
	rng := rand.New(rand.NewPCG(uint64(c.n), uint64(c.k*c.rows+c.z)))

	// x: z slices side by side in each row (x_off = s·k), ldx = z·k + 8; half values.
	ldx := c.z*c.k + 8
	xBuf := newBuffer(t, d, 2*c.n*ldx)
	xh := device.View[uint16](xBuf)
	x := make([]float64, c.n*ldx)
	for i := range x {
		xh[i] = float64ToHalf(rng.NormFloat64())
		x[i] = halfToFloat64(xh[i])
	}
	// y: z slices side by side (y_off = s·rows), ldy = z·rows + 16.
	ldy := c.z*c.rows + 16
	elem := 4
	if c.halfOut {
		elem = 2
	}
	yBuf := newBuffer(t, d, elem*c.n*ldy)

	prm := kernels.MmParams{N: uint32(c.n), Rows: uint32(c.rows), K: uint32(c.k), Ldx: uint32(ldx), Ldy: uint32(ldy), Mul: c.mul}
	if c.halfOut {
		prm.Epi = 1
	}
	binds := []binding{{index: 6, buf: xBuf}, {index: 7, buf: yBuf}}
	weights := make([]decodedWeights, c.z)
	for s := 0; s < c.z; s++ {
		payload, err := quant.Encode(c.codec, []int{c.rows, c.k}, randomWeights(rng, c.rows, c.k))
		if err != nil {
			t.Fatal(err)
		}
		wBuf := newBuffer(t, d, len(payload))
		copy(wBuf.Bytes(), payload)
		binds = append(binds, binding{index: s, buf: wBuf})
		switch c.codec {
		case quant.Q4TP:
			weights[s] = decodeQ4TP(payload, c.rows, c.k)
			gpr := c.k / 32
			prm.ParamsOff = uint32(c.rows * gpr * 16)
			prm.CodesOff = prm.ParamsOff + uint32(4*c.rows)
			prm.CodeStride = uint32((gpr*5 + 7) / 8)
		default:
			weights[s] = decodeQ8(payload, c.rows, c.k, c.codec == quant.Q8_2F)
			rsBuf := newBuffer(t, d, 4*c.rows)
			copy(device.View[float32](rsBuf), weights[s].rs)
			colBuf := newBuffer(t, d, 4*c.k)
			copy(device.View[float32](colBuf), weights[s].col)
			binds = append(binds, binding{index: 3 + s, buf: rsBuf}, binding{index: 9 + s, buf: colBuf})
		}
		prm.XOff[s] = uint32(s * c.k)
		prm.YOff[s] = uint32(s * c.rows)
	}
	binds = append(binds, binding{index: 8, bytes: device.StructBytes(&prm)})
	// Poison y so unwritten elements show up.
	for i := range yBuf.Bytes() {
		yBuf.Bytes()[i] = 0xff
	}

	groups, threads := kernels.MmGrid(c.n, c.rows, c.z)
	run(t, d, p, groups, threads, binds...)

	// Error bound per element, from what the kernel does: W is staged as half (relative error
	// 2^-11, plus 2^-22 for the float scale evaluation), products are exact (fma) and summed in
	// float (K·2^-24 of Σ|x·w|), the row scale and mul cost one float rounding each, and the
	// output is rounded once to half or float. 1.01 covers the second-order terms.
	outUlp := math.Ldexp(1, -24)
	if c.halfOut {
		outUlp = math.Ldexp(1, -11)
	}
	worst := 0.0
	for s := 0; s < c.z; s++ {
		w := weights[s].w
		for tk := 0; tk < c.n; tk++ {
			for o := 0; o < c.rows; o++ {
				var ref, mag float64
				for i := 0; i < c.k; i++ {
					xv := x[tk*ldx+s*c.k+i]
					ref += xv * w[o*c.k+i]
					mag += math.Abs(xv * w[o*c.k+i])
				}
				ref *= float64(c.mul)
				mag *= math.Abs(float64(c.mul))
				bound := 1.01 * (mag*(math.Ldexp(1, -11)+math.Ldexp(1, -22)+float64(c.k+4)*math.Ldexp(1, -24)) + math.Abs(ref)*outUlp)
				at := tk*ldy + s*c.rows + o
				var got float64
				if c.halfOut {
					got = halfToFloat64(device.View[uint16](yBuf)[at])
				} else {
					got = float64(device.View[float32](yBuf)[at])
				}
				if err := math.Abs(got - ref); !(err <= bound) {
					t.Fatalf("slice %d y[%d,%d] = %v, reference %v: error %.3g over the bound %.3g", s, tk, o, got, ref, err, bound)
				}
				worst = max(worst, math.Abs(got-ref)/bound)
			}
		}
	}
	// Padding columns of y stay untouched.
	for tk := 0; tk < c.n; tk++ {
		for i := c.z * c.rows; i < ldy; i++ {
			b := yBuf.Bytes()[(tk*ldy+i)*elem]
			if b != 0xff {
				t.Fatalf("y[%d,%d] (padding) was written", tk, i)
			}
		}
	}
	t.Logf("largest error / bound: %.3g", worst)
}
