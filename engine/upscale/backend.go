package upscale

import "easel/engine/ml"

// Backend is the ml op set plus the upscalers' own four ops. engine/ml/cpu's and
// engine/ml/metalops's backends implement it.
type Backend interface {
	ml.Backend
	// LeakyReLU is dst = x where x ≥ 0, else slope·x. dst may be x.
	LeakyReLU(dst, x ml.Tensor, slope float32) error
	// PReLU is dst[c, y, x] = x where x ≥ 0, else slope[c]·x, for x [C, H, W] and slope one row
	// of C. dst may be x.
	PReLU(dst, x, slope ml.Tensor) error
	// PixelShuffle is dst[c, y·r + i, x·r + j] = x[c·r² + i·r + j, y, x] (x [C·r², H, W], dst [C, rH, rW]).
	PixelShuffle(dst, x ml.Tensor, r int) error
	// PixelUnshuffle is PixelShuffle's inverse (x [C, rH, rW], dst [C·r², H, W]).
	PixelUnshuffle(dst, x ml.Tensor, r int) error
}
