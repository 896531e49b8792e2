package preview

import (
	"context"
	"fmt"
	"image"
	"time"

	"easel/engine/vae"
)

// Codec is the part of a VAE calibration needs (*vae.Model is one).
type Codec interface {
	Decoder
	Encode(ctx context.Context, img *vae.Image) (mode, normalized *vae.Latents, err error)
}

// calibrationRidge keeps the normal equations well conditioned when a VAE leaves some latent
// channels nearly constant over the calibration pictures.
const calibrationRidge = 1e-4

// CalibrationVersion changes whenever the calibration pictures or the fit change, so projections
// cached by an older Easel are fitted again.
const CalibrationVersion = 1

// Calibrate fits the projection for the VAE c from pictures: each is encoded by c's encoder (the
// latents the model itself makes for natural pictures), decoded again by c's decoder, and the
// fit maps every latent token to the mean of the 16×16 patch the decoder makes of it.
//
// The target is the decoder's output, not the picture: the preview stands in for decoding the
// step's x0 estimate, so decode(z) is what it must approximate. For a trained VAE
// decode(encode(img)) ≈ img and the two targets agree; for one that reconstructs poorly (the
// random-weight test models) only the decoder's output is the right answer, so this target works
// on any VAE.
func Calibrate(ctx context.Context, c Codec, pictures []*image.NRGBA) (*Projection, error) {
	start := time.Now()
	samples, err := CalibrationSamples(ctx, c, pictures)
	if err != nil {
		return nil, err
	}
	p, err := Fit(samples, calibrationRidge)
	if err != nil {
		return nil, err
	}
	p.Source = fmt.Sprintf("calibrated by Easel (version %d) from %d built-in pictures (assets/calibration) encoded and decoded by this model's VAE: least squares (ridge %g) of %d latent tokens against their decoded 16×16 patch means",
		CalibrationVersion, len(pictures), calibrationRidge, len(samples))
	p.Error.TrainRMS, _ = p.PatchError(samples)
	p.Error.HeldOutNotes = "8-bit levels, per channel, patch means (16×16) against the model's own decode of the calibration pictures' latents"
	p.Calibrated = true
	p.Seconds = time.Since(start).Seconds()
	return p, nil
}

// CalibrationSamples encodes each picture with c and pairs every latent token with its decoded
// patch's mean.
func CalibrationSamples(ctx context.Context, c Codec, pictures []*image.NRGBA) ([]Sample, error) {
	var all []Sample
	for i, pic := range pictures {
		_, zn, err := c.Encode(ctx, vae.FromNRGBA(pic))
		if err != nil {
			return nil, fmt.Errorf("preview calibration: encoding picture %d: %w", i+1, err)
		}
		s, _, err := PatchSamples(ctx, c, zn.Tokens(), zn.H, zn.W)
		if err != nil {
			return nil, fmt.Errorf("preview calibration: picture %d: %w", i+1, err)
		}
		all = append(all, s...)
	}
	return all, nil
}
