package cmf

import (
	"math/rand/v2"
	"testing"
)

// The test vectors cortiq asserts in tests/roundtrip.rs (cmf.md §7).
func TestHash64Vectors(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want uint64
	}{
		{"empty", nil, 0x0},
		{"CMF", []byte("CMF"), 0xb59aa39a074033ec},
		{"hex16", []byte("0123456789abcdef"), 0x30d401310062ea9f},
		{"bytes0..255", all, 0x9955bb876c0706bf},
	} {
		if got := Hash64(tc.in); got != tc.want {
			t.Errorf("Hash64(%s) = %#016x, want %#016x", tc.name, got, tc.want)
		}
	}
}

// Writing a stream in arbitrary pieces, or accumulating disjoint word ranges separately, must give
// the one-shot hash.
func TestHasherPiecewiseMatchesOneShot(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 255, 1000, 4099} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		want := Hash64(b)
		var h Hasher
		for rest := b; len(rest) > 0; {
			k := min(len(rest), 1+rng.IntN(13))
			h.Write(rest[:k])
			rest = rest[k:]
		}
		if got := h.Sum64(); got != want {
			t.Errorf("n=%d: piecewise %#x, one-shot %#x", n, got, want)
		}
		split := (n / 2) &^ 7
		whole := n &^ 7
		acc := accumulateWords(b[:split], 0) ^ accumulateWords(b[split:whole], uint64(split/8))
		if got := finishHash(acc, uint64(whole/8), b[whole:], uint64(n)); got != want {
			t.Errorf("n=%d: split accumulation %#x, one-shot %#x", n, got, want)
		}
	}
}
