package seed

// EditNoise is the noise seed of an edit whose condition image was made with seed s at the same
// size (the edit-seed trap: re-drawing the image's own noise replays it and gives a haloed
// near-copy instead of following the instruction). It is a fixed function, so an image records
// and reproduces it: the low 32 bits of SplitMix64's output for state s,
//
//	z = s + 0x9E3779B97F4A7C15
//	z = (z ^ z>>30) · 0xBF58476D1CE4E5B9
//	z = (z ^ z>>27) · 0x94D049BB133111EB
//	z = z ^ z>>31
//	noise seed = z mod 2³²  (+1 mod 2³² if that equals s)
//
// 32 bits, so the seed stays exact in JSON clients that hold numbers as doubles.
func EditNoise(s uint64) uint64 {
	z := s + 0x9E3779B97F4A7C15
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	z ^= z >> 31
	n := z & 0xFFFFFFFF
	if n == s {
		n = (n + 1) & 0xFFFFFFFF
	}
	return n
}
