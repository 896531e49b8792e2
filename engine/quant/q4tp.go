package quant

import (
	"encoding/binary"
	"math"
)

// q4tp (dtype 15, "Q4TiledP"), cmf.md §9.3: 4-bit weights in 32-weight tiles whose scales are
// 5-bit rungs on a per-row geometric ladder 2^(lo + code·step), lo and step stored as f16.
//
//	[nibbles : rows·gpr·16][row params : rows·{f16 lo, f16 step}][codes : rows·stride]
//
// gpr = cols/32 tiles per row and stride = ceil(gpr·5/8). Byte k of a tile holds weight 2k in its
// low nibble and weight 2k+1 in its high nibble, each as n − 8. Tile g's code occupies bits
// [5g, 5g+5) of its row's code slice, least significant bit first.

const (
	q4tpTileBytes = 16 // nibble bytes per 32-weight tile
	q4tpTopRung   = 31 // highest 5-bit code
)

// q4tpLayout is where the three planes of a q4tp payload start.
type q4tpLayout struct {
	tilesPerRow, paramsOff, codesOff, codeStride int
}

func newQ4TPLayout(rows, cols int) q4tpLayout {
	gpr := cols / GroupSize
	nib := rows * gpr * q4tpTileBytes
	return q4tpLayout{tilesPerRow: gpr, paramsOff: nib, codesOff: nib + 4*rows, codeStride: (gpr*5 + 7) / 8}
}

// q4tpCode reads tile g's 5-bit code from one row's code slice.
func q4tpCode(codes []byte, g int) int {
	bit := 5 * g
	b, sh := bit>>3, uint(bit&7)
	v := uint16(codes[b])
	if sh > 3 {
		v |= uint16(codes[b+1]) << 8
	}
	return int(v>>sh) & 31
}

// q4tpPutCode ORs tile g's code into a zeroed row code slice.
func q4tpPutCode(codes []byte, g, code int) {
	bit := 5 * g
	b, sh := bit>>3, uint(bit&7)
	v := uint16(code & 31)
	codes[b] |= byte(v << sh)
	if sh > 3 {
		codes[b+1] |= byte(v >> (8 - sh))
	}
}

// q4tpLadder expands a row's 32 scales from its stored params in cortiq's canonical geometric
// form: t[0] = 2^lo, t[c] = t[c−1]·2^step, all in float32.
func q4tpLadder(params []byte, t *[32]float32) {
	lo := halfTable[binary.LittleEndian.Uint16(params[0:2])]
	step := halfTable[binary.LittleEndian.Uint16(params[2:4])]
	ratio := exp2f(step)
	t[0] = exp2f(lo)
	for c := 1; c < 32; c++ {
		t[c] = t[c-1] * ratio
	}
}

// exp2f is 2^x for a float32, correctly rounded from the float64 result.
func exp2f(x float32) float32 { return float32(math.Exp2(float64(x))) }

// log2f is log2(x) for a float32, correctly rounded from the float64 result.
func log2f(x float32) float32 { return float32(math.Log2(float64(x))) }

// dequantizeQ4TP decodes rows r0..r1 into dst. Per tile it scales the 16 possible nibble values
// once and then only looks them up.
func dequantizeQ4TP(payload []byte, rows, cols, r0, r1 int, dst []float32) {
	l := newQ4TPLayout(rows, cols)
	gpr := l.tilesPerRow
	var ladder [32]float32
	var lut [16]float32
	for r := r0; r < r1; r++ {
		q4tpLadder(payload[l.paramsOff+4*r:], &ladder)
		codes := payload[l.codesOff+r*l.codeStride : l.codesOff+(r+1)*l.codeStride]
		tiles := payload[r*gpr*q4tpTileBytes : (r+1)*gpr*q4tpTileBytes]
		out := dst[(r-r0)*cols : (r-r0+1)*cols]
		for g := 0; g < gpr; g++ {
			s := ladder[q4tpCode(codes, g)]
			for n := range lut {
				lut[n] = (float32(n) - 8) * s
			}
			o := (*[GroupSize]float32)(out[g*GroupSize:])
			tile := tiles[g*q4tpTileBytes : g*q4tpTileBytes+q4tpTileBytes]
			expandNibbles(binary.LittleEndian.Uint64(tile[0:8]), &lut, (*[16]float32)(o[0:16]))
			expandNibbles(binary.LittleEndian.Uint64(tile[8:16]), &lut, (*[16]float32)(o[16:32]))
		}
	}
}

// expandNibbles looks up the 16 nibbles of x, least significant first.
func expandNibbles(x uint64, lut *[16]float32, o *[16]float32) {
	o[0], o[1], o[2], o[3] = lut[x&15], lut[x>>4&15], lut[x>>8&15], lut[x>>12&15]
	o[4], o[5], o[6], o[7] = lut[x>>16&15], lut[x>>20&15], lut[x>>24&15], lut[x>>28&15]
	o[8], o[9], o[10], o[11] = lut[x>>32&15], lut[x>>36&15], lut[x>>40&15], lut[x>>44&15]
	o[12], o[13], o[14], o[15] = lut[x>>48&15], lut[x>>52&15], lut[x>>56&15], lut[x>>60]
}

// q4tpScratch is one encoding worker's per-row buffers.
type q4tpScratch struct {
	logScale []float32
	dead     []bool
}

// encodeQ4TPRows quantizes rows r0..r1 (w holds just those rows) into their places in payload,
// following cortiq's encode_q4tp (0.5.100) with its neighbour search on.
func encodeQ4TPRows(payload []byte, rows, cols, r0, r1 int, w []float32, sc *q4tpScratch) {
	l := newQ4TPLayout(rows, cols)
	gpr := l.tilesPerRow
	if len(sc.logScale) < gpr {
		sc.logScale = make([]float32, gpr)
		sc.dead = make([]bool, gpr)
	}
	lg, dead := sc.logScale[:gpr], sc.dead[:gpr]
	var ladder [32]float32
	for r := r0; r < r1; r++ {
		row := w[(r-r0)*cols : (r-r0+1)*cols]

		// 1. Each tile's log2 scale; the row's range over the live tiles.
		lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
		for g := range gpr {
			absmax := float32(0)
			for _, v := range row[g*GroupSize : (g+1)*GroupSize] {
				absmax = max32(absmax, abs32(v))
			}
			dead[g] = absmax == 0
			lg[g] = log2f(halfScale(absmax / 7))
			if !dead[g] {
				lo = min32(lo, lg[g])
				hi = max32(hi, lg[g])
			}
		}
		if math.IsInf(float64(lo), 0) {
			lo, hi = lg[0], lg[0]
		}

		// 2. Row params, rounded to f16 before any code is chosen; step nudged up until the
		// top rung reaches the row's largest scale.
		loHalf := Float32ToHalf(lo)
		loR := halfTable[loHalf]
		stepHalf := Float32ToHalf(max32(hi-loR, 0) / q4tpTopRung)
		for range 64 {
			st := halfTable[stepHalf]
			if st > 0 && loR+float32(q4tpTopRung*st) >= hi {
				break
			}
			stepHalf++
		}
		params := payload[l.paramsOff+4*r : l.paramsOff+4*r+4]
		binary.LittleEndian.PutUint16(params[0:], loHalf)
		binary.LittleEndian.PutUint16(params[2:], stepHalf)
		st := halfTable[stepHalf]

		// 3. The ladder the decoder will build, then a code and nibbles per tile.
		q4tpLadder(params, &ladder)
		codes := payload[l.codesOff+r*l.codeStride : l.codesOff+(r+1)*l.codeStride]
		clear(codes)
		tiles := payload[r*gpr*q4tpTileBytes : (r+1)*gpr*q4tpTileBytes]
		for g := range gpr {
			tile := row[g*GroupSize : (g+1)*GroupSize]
			code := 0
			if !dead[g] && st > 0 {
				nominal := int(saturate(rne((lg[g]-loR)/st), 0, q4tpTopRung))
				code = q4tpBestCode(tile, &ladder, nominal)
			}
			q4tpPutCode(codes, g, code)
			s := ladder[code]
			inv := float32(0)
			if s > 0 {
				inv = 1 / s
			}
			dst := tiles[g*q4tpTileBytes : (g+1)*q4tpTileBytes]
			for k := range q4tpTileBytes {
				n0 := saturate(rne(tile[2*k]*inv), -8, 7) + 8
				n1 := saturate(rne(tile[2*k+1]*inv), -8, 7) + 8
				dst[k] = byte(n0&15) | byte(n1)<<4
			}
		}
	}
}

// q4tpBestCode searches the rungs nominal−2 … nominal+1 for the least squared error of the tile,
// summed in float32; the first strict minimum wins.
func q4tpBestCode(tile []float32, ladder *[32]float32, nominal int) int {
	bestErr, best := float32(math.Inf(1)), nominal
	for c := max(0, nominal-2); c <= min(q4tpTopRung, nominal+1); c++ {
		s := ladder[c]
		if s <= 0 {
			continue
		}
		inv := 1 / s
		var sum float32
		for _, v := range tile {
			q := clamp32(rne(v*inv), -8, 7)
			d := v - float32(q*s)
			sum += float32(d * d)
		}
		if sum < bestErr {
			bestErr, best = sum, c
		}
	}
	return best
}
