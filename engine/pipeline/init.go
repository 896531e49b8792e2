package pipeline

import (
	"context"
	"fmt"
	"image"

	"easel/engine/sched"
	"easel/engine/vae"
)

// InitImage is the picture a request starts from instead of pure noise: img2img (Strength below
// 1), inpainting (with a Mask) and outpainting (a padded image with a mask over the new area, at
// Strength 1). The pixel work that prepares it — fitting the image to the output size, growing
// and feathering the mask, padding a canvas, pasting the result back — is the caller's (see
// engine/imagework); the pipeline takes the image and mask already at the output size.
//
// The recipe is diffusers' Qwen-Image img2img and inpaint pipelines' on Qwen-Image-2.1's latents:
// the image is encoded by the VAE as condition images are (the mode of the latent distribution,
// normalized); the full schedule of the request's steps is built as for text-to-image and its
// first int(N − N·Strength) steps are skipped (sched.StartStep, diffusers' get_timesteps); the
// run starts from x = σ₀·noise + (1 − σ₀)·x0 with the seed's own noise, so Strength 1 (σ₀ = 1)
// gives the text-to-image picture bit for bit. With a mask, after every step the latents the
// mask keeps are replaced by the original re-noised to the next σ with the same noise (the clean
// original after the last step), as diffusers' inpaint blend does; a grey level m is a partial
// strength as Differential Diffusion defines it (see LatentMask and blend).
type InitImage struct {
	// Image is the picture, at the output size exactly (alpha is kept as the VAE's fourth
	// channel, as for condition images).
	Image *image.NRGBA
	// Strength in (0, 1] is how much of the schedule runs: 1 repaints from pure noise, 0.6 (the
	// usual default) keeps the composition and redraws the detail.
	Strength float64
	// Mask, when not nil, is the region to repaint, at the output size: white repaints, black
	// keeps the original, a grey level m repaints with strength m·Strength (it joins the
	// denoising once the schedule has fallen to m of its start). A mask with no white at all
	// is refused: there is nothing to repaint.
	Mask *image.Gray
}

// LatentCell is the side of the square of pixels one latent token covers (the VAE's 8× and the
// 2×2 patch).
const LatentCell = 16

// LatentMask is the mask on the h×w latent grid, one value in [0, 1] per packed token (y·w + x):
// the largest mask value among the 16×16 pixels the token covers, so a token repaints as
// strongly as the strongest pixel in its cell asks (stable-diffusion.cpp's "nearest max"; a
// binary mask gives a binary latent mask). The mask must be 16h × 16w pixels.
func LatentMask(mask *image.Gray, h, w int) ([]float32, error) {
	if mask == nil {
		return nil, fmt.Errorf("no mask given")
	}
	b := mask.Bounds()
	if b.Dx() != w*LatentCell || b.Dy() != h*LatentCell {
		return nil, fmt.Errorf("the mask is %d×%d pixels but the image is %d×%d", b.Dx(), b.Dy(), w*LatentCell, h*LatentCell)
	}
	out := make([]float32, h*w)
	for y := 0; y < b.Dy(); y++ {
		row := mask.Pix[mask.PixOffset(b.Min.X, b.Min.Y+y):]
		lat := out[(y/LatentCell)*w:]
		for x := 0; x < b.Dx(); x++ {
			if v := float32(row[x]) / 255; v > lat[x/LatentCell] {
				lat[x/LatentCell] = v
			}
		}
	}
	return out, nil
}

// initPlan is a checked InitImage: where the schedule is entered and the latent mask.
type initPlan struct {
	image *image.NRGBA
	start int       // the steps skipped
	mask  []float32 // per latent token; nil: the whole image repaints
}

// resolveInit checks a request's init image against its resolved size and schedule.
func resolveInit(in *InitImage, s *settings) (*initPlan, error) {
	if in.Image == nil {
		return nil, fmt.Errorf("%w: no image to start from", ErrImages)
	}
	if b := in.Image.Bounds(); b.Dx() != s.width || b.Dy() != s.height {
		return nil, fmt.Errorf("%w: the image to start from is %d×%d but the output is %d×%d: fit it to the output size first (app/imagework.Fit does)",
			ErrSize, b.Dx(), b.Dy(), s.width, s.height)
	}
	start, err := sched.StartStep(s.steps, in.Strength)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSettings, err)
	}
	pl := &initPlan{image: in.Image, start: start}
	if in.Mask != nil {
		if pl.mask, err = LatentMask(in.Mask, s.h, s.w); err != nil {
			return nil, fmt.Errorf("%w: %v: scale the mask to the output size first", ErrSize, err)
		}
		repaint := false
		for _, v := range pl.mask {
			repaint = repaint || v > 0
		}
		if !repaint {
			return nil, fmt.Errorf("%w: the mask is black everywhere, so there is nothing to repaint: paint the area to change in white", ErrSettings)
		}
	}
	return pl, nil
}

// encodeInit is the init image's packed normalized latents [h·w, 64], encoded as condition
// images are (encodeImage: in tiles when one piece would not fit the VAE's budget).
func (p *Pipeline) encodeInit(ctx context.Context, img *image.NRGBA, h, w int) ([]float32, error) {
	zn, err := p.encodeImage(ctx, vae.FromNRGBA(img))
	if err != nil {
		return nil, fmt.Errorf("image to start from: %w", err)
	}
	if zn.H != h || zn.W != w {
		return nil, fmt.Errorf("image to start from: encoded to a %d×%d latent grid, want %d×%d", zn.H, zn.W, h, w)
	}
	return zn.Tokens(), nil
}
