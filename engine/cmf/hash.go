package cmf

import "encoding/binary"

// hash64 constants (cortiq hash.rs): the murmur3 finalizer and the golden-ratio word weight.
const (
	fmixMul1   = 0xFF51AFD7ED558CCD
	fmixMul2   = 0xC4CEB9FE1A85EC53
	wordWeight = 0x9E3779B97F4A7C15
)

func fmix64(x uint64) uint64 {
	x ^= x >> 33
	x *= fmixMul1
	x ^= x >> 33
	x *= fmixMul2
	x ^= x >> 33
	return x
}

// Hash64 is cortiq's hash64 of b: every 8-byte little-endian word i contributes
// fmix64(word) ^ i·0x9E3779B97F4A7C15 to an XOR accumulator, a zero-padded tail word counts as
// the next word, and the length is folded in before a final fmix64. It guards tensor payloads,
// the header, the directory and the optional sections.
func Hash64(b []byte) uint64 {
	var h Hasher
	h.Write(b)
	return h.Sum64()
}

// accumulateWords XORs the contributions of the whole 8-byte words of b, the first of which is
// word number first of the hashed stream. len(b) must be a multiple of 8. Because the
// contributions are combined by XOR, disjoint word ranges can be accumulated independently (in
// parallel) and XORed together.
func accumulateWords(b []byte, first uint64) uint64 {
	var acc uint64
	k := uint64(wordWeight) // a variable, so that multiples wrap as the format's multiply does
	k2, k3, k4 := 2*k, 3*k, 4*k
	weight := first * k // i·0x9E37…, advanced by addition (wrapping, like the multiply)
	for len(b) >= 32 {
		w0 := binary.LittleEndian.Uint64(b[0:])
		w1 := binary.LittleEndian.Uint64(b[8:])
		w2 := binary.LittleEndian.Uint64(b[16:])
		w3 := binary.LittleEndian.Uint64(b[24:])
		acc ^= fmix64(w0) ^ weight
		acc ^= fmix64(w1) ^ (weight + k)
		acc ^= fmix64(w2) ^ (weight + k2)
		acc ^= fmix64(w3) ^ (weight + k3)
		b = b[32:]
		weight += k4
	}
	for len(b) >= 8 {
		acc ^= fmix64(binary.LittleEndian.Uint64(b)) ^ weight
		b = b[8:]
		weight += k
	}
	return acc
}

// finishHash folds the tail (fewer than 8 bytes, the word numbered words) and the total length
// into an accumulator and returns the hash.
func finishHash(acc uint64, words uint64, tail []byte, length uint64) uint64 {
	if len(tail) > 0 {
		var w [8]byte
		copy(w[:], tail)
		acc ^= fmix64(binary.LittleEndian.Uint64(w[:])) ^ words*wordWeight
	}
	return fmix64(acc ^ length)
}

// Hasher computes Hash64 over a stream written in pieces of any size. The zero value is ready.
type Hasher struct {
	acc   uint64
	words uint64 // whole words consumed
	buf   [8]byte
	nbuf  int
}

// Write adds p to the hashed stream. It never fails.
func (h *Hasher) Write(p []byte) (int, error) {
	n := len(p)
	if h.nbuf > 0 {
		c := copy(h.buf[h.nbuf:], p)
		h.nbuf += c
		p = p[c:]
		if h.nbuf < 8 {
			return n, nil
		}
		h.acc ^= accumulateWords(h.buf[:], h.words)
		h.words++
		h.nbuf = 0
	}
	whole := len(p) &^ 7
	h.acc ^= accumulateWords(p[:whole], h.words)
	h.words += uint64(whole / 8)
	h.nbuf = copy(h.buf[:], p[whole:])
	return n, nil
}

// Sum64 is the hash of everything written so far.
func (h *Hasher) Sum64() uint64 {
	return finishHash(h.acc, h.words, h.buf[:h.nbuf], h.words*8+uint64(h.nbuf))
}
