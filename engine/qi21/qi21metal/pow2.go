package qi21metal

// pow2 is 2^e as a float32.
func pow2(e int) float32 {
	f := float32(1)
	for ; e > 0; e-- {
		f *= 2
	}
	for ; e < 0; e++ {
		f /= 2
	}
	return f
}
