package pipeline

// NoiseSeeds are image i's noise seed, when the request moves the noise off its seed
// (Request.NoiseSeed: an edit of an image made with the same seed and size), else nil: image i's
// starting noise is then drawn from the seed ImageSeeds gives. With a noise seed N, image i draws
// from N+i (N for every image of a variation batch, whose variation seeds count up instead).
func (r *Request) NoiseSeeds(i int) *uint64 {
	if r.NoiseSeed == nil {
		return nil
	}
	n := *r.NoiseSeed
	if r.VariationStrength <= 0 {
		n += uint64(i)
	}
	return &n
}

// noiseSeed is the seed image i's noise is drawn from.
func (r *Request) noiseSeed(i int) uint64 {
	if n := r.NoiseSeeds(i); n != nil {
		return *n
	}
	s, _ := r.ImageSeeds(i)
	return s
}
