package pipeline

import (
	"context"
	"fmt"
	"image"

	"easel/engine/condimage"
	"easel/engine/latents"
	"easel/engine/qwen3vl"
	"easel/engine/sched"
	"easel/engine/seed"
	"easel/engine/vae"
)

// The stages of Run, exported so tests can start the chain from the reference's own
// intermediate data (processor outputs, VAE inputs, the recorded noise).

// Conditioning is one encoded prompt, as the denoiser takes it.
type Conditioning struct {
	// Embeddings are the prompt rows after the system-prefix drop, [L, context width].
	Embeddings []float32
	// ImageMask is true at the L rows that are <|image_pad|> slots (condition-image latents
	// replace them in the denoiser).
	ImageMask []bool
}

// Rows is L, the number of prompt rows.
func (c *Conditioning) Rows() int { return len(c.ImageMask) }

// PrepareImages resizes each condition image for both encoders (spec §3.1–3.2) for an output
// resolution res: about res² pixels, sides multiples of 32.
func (p *Pipeline) PrepareImages(images []*image.NRGBA, res int) ([]*condimage.ConditionImage, error) {
	out := make([]*condimage.ConditionImage, len(images))
	for i, img := range images {
		ci, err := condimage.PrepareConditionImage(img, res, p.proc)
		if err != nil {
			return nil, fmt.Errorf("%w: condition image %d: %v", ErrImages, i+1, err)
		}
		if ci.VisionWidth != ci.Width || ci.VisionHeight != ci.Height {
			// The denoiser puts the VAE latents where the vision tokens were, one latent per
			// quarter token, so both copies must have one size (the reference fails here too).
			return nil, fmt.Errorf("%w: condition image %d is %d×%d for the VAE but the image processor's pixel bounds (%d…%d) make it %d×%d for the vision tower: choose an output resolution whose square lies within those bounds",
				ErrImages, i+1, ci.Width, ci.Height, p.proc.MinPixels, p.proc.MaxPixels, ci.VisionWidth, ci.VisionHeight)
		}
		out[i] = ci
	}
	return out, nil
}

// BuildPrompt tokenizes text in the template for the prepared condition images (spec §1).
func (p *Pipeline) BuildPrompt(text string, conds []*condimage.ConditionImage) (qwen3vl.Prompt, error) {
	pads := make([]int, len(conds))
	for i, c := range conds {
		n, err := qwen3vl.ImagePadCount(c.GridTHW, p.proc.MergeSize)
		if err != nil {
			return qwen3vl.Prompt{}, fmt.Errorf("condition image %d: %w", i+1, err)
		}
		pads[i] = n
	}
	return qwen3vl.BuildPrompt(p.tok, text, pads)
}

// VisionInputs are the prepared images as the vision tower takes them.
func VisionInputs(conds []*condimage.ConditionImage) []qwen3vl.VisionInput {
	out := make([]qwen3vl.VisionInput, len(conds))
	for i, c := range conds {
		out[i] = qwen3vl.VisionInput{Pixels: c.PixelValues, Grid: c.GridTHW}
	}
	return out
}

// VAEInputs are the prepared images as the VAE encoder takes them ([4, Hc, Wc] in [−1, 1]).
func VAEInputs(conds []*condimage.ConditionImage) []*vae.Image {
	out := make([]*vae.Image, len(conds))
	for i, c := range conds {
		out[i] = &vae.Image{C: 4, H: c.Height, W: c.Width, Pix: c.VAEInput}
	}
	return out
}

// EncodePrompt runs the text encoder over one unpadded prompt's token ids (with its images'
// pixel rows) and drops the first drop rows (spec §1.4–1.5). The image mask comes from the ids.
func (p *Pipeline) EncodePrompt(ctx context.Context, ids []int32, drop int, vision []qwen3vl.VisionInput) (*Conditioning, error) {
	if drop < 0 || drop >= len(ids) {
		return nil, fmt.Errorf("prompt of %d tokens cannot drop %d system rows", len(ids), drop)
	}
	if len(vision) > 0 && !p.vision {
		return nil, fmt.Errorf("%w: this model file has no vision tower", ErrImages)
	}
	hidden, err := p.textNet.Encode(ctx, ids, vision)
	if err != nil {
		return nil, err
	}
	emb, err := qwen3vl.DropPrefixRows(hidden, p.enc.TextConfig().Hidden, drop)
	if err != nil {
		return nil, err
	}
	c := &Conditioning{Embeddings: emb, ImageMask: make([]bool, len(ids)-drop)}
	for i, id := range ids[drop:] {
		c.ImageMask[i] = id == p.padID
	}
	return c, nil
}

// EncodeConditionImages encodes each image with the VAE (the mode of the latent distribution,
// normalized; encodeImage) and concatenates their packed tokens in order (spec §3.3). shapes are
// the latent grids (h, w).
func (p *Pipeline) EncodeConditionImages(ctx context.Context, images []*vae.Image) (latents []float32, shapes [][2]int, err error) {
	for i, img := range images {
		zn, err := p.encodeImage(ctx, img)
		if err != nil {
			return nil, nil, fmt.Errorf("condition image %d: %w", i+1, err)
		}
		latents = append(latents, zn.Tokens()...)
		shapes = append(shapes, [2]int{zn.H, zn.W})
	}
	return latents, shapes, nil
}

// Noise is the starting noise for a seed on an h×w latent grid, packed [h·w, channels] with the
// denoiser's in_channels, exactly as diffusers draws it (engine/seed, engine/latents).
func (p *Pipeline) Noise(s uint64, h, w int) ([]float32, error) {
	channels := p.dit.Config.InChannels
	n, err := seed.LatentNoise(s, channels, h, w)
	if err != nil {
		return nil, err
	}
	return latents.Pack(n, channels, h, w)
}

// VariationNoise is Noise for seed s moved towards the variation seed v by strength (A1111's
// subseed: seed.VariationNoise), packed; strength 0 is Noise(s) and 1 is Noise(v), bit for bit.
func (p *Pipeline) VariationNoise(s, v uint64, strength float64, h, w int) ([]float32, error) {
	channels := p.dit.Config.InChannels
	n, err := seed.VariationNoise(s, seed.Variation{Seed: v, Strength: strength}, channels, h, w)
	if err != nil {
		return nil, err
	}
	return latents.Pack(n, channels, h, w)
}

// Schedule is the sigma grid for steps on a target of tokens latent tokens, or for a fixed grid
// when sigmas is not nil.
func (p *Pipeline) Schedule(steps int, sigmas []float64, tokens int) (sched.Schedule, error) {
	return p.scheduleFor(nil, steps, sigmas, tokens)
}

// scheduleFor is Schedule under a request's scheduler configuration (nil: the model's).
func (p *Pipeline) scheduleFor(cfg *sched.Config, steps int, sigmas []float64, tokens int) (sched.Schedule, error) {
	c := p.sched
	if cfg != nil {
		if err := cfg.Validate(); err != nil {
			return sched.Schedule{}, err
		}
		c = *cfg
	}
	if sigmas != nil {
		return c.ScheduleFromSigmas(sigmas, tokens)
	}
	return c.Schedule(steps, tokens)
}

// SchedulerConfig is the model's scheduler configuration.
func (p *Pipeline) SchedulerConfig() sched.Config { return p.sched }

// Decode turns the final packed latents [h·w, 64] into the image in [−1, 1]: in one piece when
// that fits the decode budget (exact: the mid-block attention sees the whole image), else in the
// largest tiles that fit, blended where they overlap. The tiling is chosen from the CPU model's
// plan wherever the VAE runs, so a device decode and its CPU fallback have the same seams.
func (p *Pipeline) Decode(ctx context.Context, latents []float32, h, w int) (*vae.Image, error) {
	zn, err := vae.FromTokens(latents, h, w)
	if err != nil {
		return nil, err
	}
	tiling := p.tiling
	if tiling == nil {
		if tiling, _, err = p.vae.ChooseTiling(h, w, p.vaeBudget()); err != nil {
			return nil, fmt.Errorf("decoding %d×%d latents: %w", h, w, err)
		}
	}
	return p.vaeNet.DecodeWith(ctx, zn, tiling)
}

// encodeImage is one image's normalized latents (the mode of the latent distribution): in one
// piece when that fits the VAE's budget (exact, and what every image of a usual size gets), else
// in the largest tiles that fit, blended where they overlap (vae.Model.EncodeTiled). As for
// Decode, the tiling is chosen from the CPU model's plan wherever the VAE runs, so a device
// encode and its CPU fallback have the same seams. Options.Tiling forces only the decode.
func (p *Pipeline) encodeImage(ctx context.Context, img *vae.Image) (*vae.Latents, error) {
	tiling, _, err := p.vae.ChooseEncodeTiling(img.H, img.W, p.vaeBudget())
	if err != nil {
		return nil, fmt.Errorf("encoding a %d×%d image: %w", img.W, img.H, err)
	}
	_, zn, err := p.vaeNet.EncodeWith(ctx, img, tiling)
	return zn, err
}

// vaeBudget is the activation memory a VAE decode or encode may take: a quarter of the op
// backend's budget (physical memory for the CPU backend), wherever the work then runs, so that a
// device decode and its CPU fallback choose the same tiles and so the same seams; leaving the
// rest to the mapped weights, the system and the user's other apps. On a 16 GB Mac a 1024² image
// decodes in one piece (3.2 GB with the published decoder) and a 2048² one in tiles; a 2048²
// start image (6.2 GB of encoder activations in one piece) encodes in tiles.
func (p *Pipeline) vaeBudget() int64 {
	return p.backendBudget() / 4
}
