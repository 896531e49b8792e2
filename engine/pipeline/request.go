package pipeline

import (
	"errors"
	"fmt"
	"image"
	"math"
	"strconv"
	"strings"

	"easel/engine/condimage"
	"easel/engine/qi21"
	"easel/engine/sched"
	"easel/engine/seed"
)

// Limits of a request.
const (
	// MaxImages is the most condition images one request takes (the model's published limit).
	MaxImages = 10
	// SizeMultiple is the granularity of output sizes (spec §2: multiple_of = 32).
	SizeMultiple = 32
	// MaxSide is the longest output side accepted, in pixels. 4096² is already 65536 target
	// tokens, sixteen times the 1024² work per step.
	MaxSide = 4096
	// MaxCount is the largest batch (Draw Things' batch count goes to 100 as well).
	MaxCount = 100
)

// The kinds of bad request, for errors.Is; every error Run returns for a bad request wraps one
// of them.
var (
	ErrSize     = errors.New("impossible image size")
	ErrImages   = errors.New("unusable condition images")
	ErrSettings = errors.New("impossible generation settings")
	ErrNoise    = errors.New("injected noise does not fit the image size")
)

// PreviewFunc turns the x0 estimate of a step — packed latents [h·w, 64], token y·w + x, channel
// last — into a small image for the user. It runs on the goroutine that delivers events, only for
// previews that are delivered.
type PreviewFunc func(x0 []float32, h, w int) image.Image

// Request is one generation.
type Request struct {
	// Prompt is what to draw; an empty prompt becomes a single space, as the reference does.
	Prompt string
	// NegativePrompt is what CFG steers away from; used when CFG > 1 (an empty one is encoded as
	// a single space, like the reference's negative_prompt="").
	NegativePrompt string
	// Images are the condition images (0 to MaxImages), in the order the prompt names them.
	Images []*image.NRGBA
	// Init, when not nil, is the picture to start from (img2img, inpainting, outpainting) with
	// its strength and mask; see InitImage. Without Width, Height and Aspect the output size is
	// the init image's.
	Init *InitImage

	// Width and Height set the output size in pixels (both or neither); each is floored to a
	// multiple of 32. When unset: Aspect, else the init image's size, else the last condition
	// image's aspect ratio at about Resolution² pixels, else the model's default size.
	Width, Height int
	// Aspect is a width/height ratio (ParseAspect reads "16:9"): about Resolution² pixels in that
	// shape, each side a multiple of 32.
	Aspect float64
	// Resolution is the output_resolution of the reference pipeline: sizes from an aspect ratio
	// and condition-image sizes hold about Resolution² pixels. 0 means the model's default.
	Resolution int

	// Steps is the number of denoiser steps (0 = the model's default).
	Steps int
	// CFG is the true-CFG scale (0 = the model's default; 1 = off).
	CFG float64
	// Seed picks the starting noise, drawn exactly as torch.Generator("cpu").manual_seed(Seed).
	Seed uint64
	// NoiseSeed, when not nil, draws the starting noise from this seed instead of Seed (see
	// NoiseSeeds); Seed stays the image's seed as recorded. seed.EditNoise derives one.
	NoiseSeed *uint64
	// Noise, when not nil, is the starting noise itself, packed [T, 64]; Seed is then unused.
	Noise []float32
	// Count is the number of images of a batch (0 or 1: one). The prompt, the condition images
	// and the prefill are computed once for the batch; image i uses seed Seed+i (A1111's, Draw
	// Things' and stable-diffusion.cpp's convention) and is bit for bit the single run with that
	// seed — or, when VariationStrength is above 0, seed Seed and variation seed VariationSeed+i
	// (A1111's: a batch of variations around one image). See ImageSeeds.
	Count int
	// VariationSeed and VariationStrength move the starting noise towards another seed's:
	// slerp(noise(Seed), noise(VariationSeed), VariationStrength), A1111's subseed and
	// subseed_strength (seed.VariationNoise). Strength 0 is the seed's own image bit for bit and
	// 1 the variation seed's.
	VariationSeed     uint64
	VariationStrength float64
	// Sigmas, when not nil, is a fixed sigma grid (one per step, without the terminal 0) that
	// replaces the step-count schedule; Steps is then len(Sigmas).
	Sigmas []float64

	// Scheduler, when not nil, replaces the model's scheduler configuration for this request (a
	// few-step LoRA's schedule: Lightning's no-terminal-stretch shift, or TurboConfig with a grid
	// in Sigmas).
	Scheduler *sched.Config

	// LoRAs are the adapters the denoiser applies, with their strengths (none: the model as is).
	// Bind them with LoRALayers.
	LoRAs []qi21.LoRA
	// LoRAFiles are LoRAs the pipeline loads itself (kept loaded between runs), applied after
	// LoRAs; Result.LoRAs reports them.
	LoRAFiles []LoRAFile

	// Cells, when not empty, makes one image per cell over one prefill (RunCells, cells.go):
	// Run returns the first cell's result with every cell's in Result.Batch, and a Finished
	// event for each. Count and Noise must be unset.
	Cells []Cell

	// Preview, when not nil, renders each step's x0 estimate into Event.Preview.Image.
	Preview PreviewFunc
	// SharpPreview also decodes some steps' x0 estimates through the real VAE decoder, at reduced
	// resolution, on a goroutine of its own that the denoiser never waits for; they arrive in
	// Event.Preview.Sharp, its costs in Event.Sharp (see SharpBudget). Needs an events channel.
	SharpPreview bool
	// Stop, when not nil and closed, ends the denoising loop at the next step boundary (after at
	// least one step): the image is decoded from the last step's x0 estimate and the result is
	// marked Interrupted (the API's /interrupt, which answers with the image as far as it got).
	Stop <-chan struct{}

	// Resume, when not nil, continues the run from a saved state instead of its first step
	// (see Resume); OnStep, when not nil, receives the state after every step (a checkpoint).
	Resume *Resume
	OnStep func(StepState)
}

// Batch is the number of images the request makes (Count, at least 1).
func (r *Request) Batch() int { return max(r.Count, 1) }

// ImageSeeds are image i's seed and variation seed: Seed+i without a variation; Seed and
// VariationSeed+i with one (A1111's all_seeds and all_subseeds).
func (r *Request) ImageSeeds(i int) (seed, variation uint64) {
	if r.VariationStrength > 0 {
		return r.Seed, r.VariationSeed + uint64(i)
	}
	return r.Seed + uint64(i), r.VariationSeed
}

// ParseAspect reads an aspect ratio written "W:H" (16:9), "WxH" or as one number (1.5).
func ParseAspect(s string) (float64, error) {
	s = strings.TrimSpace(s)
	bad := fmt.Errorf("%w: aspect ratio %q: write it as width:height, like 16:9", ErrSize, s)
	if a, b, ok := strings.Cut(strings.ReplaceAll(s, "x", ":"), ":"); ok {
		w, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
		h, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
		if err1 != nil || err2 != nil || !(w > 0) || !(h > 0) || math.IsInf(w, 0) || math.IsInf(h, 0) {
			return 0, bad
		}
		return w / h, nil
	}
	r, err := strconv.ParseFloat(s, 64)
	if err != nil || !(r > 0) || math.IsInf(r, 0) {
		return 0, bad
	}
	return r, nil
}

// OutputSize is the image size a request produces (spec §2): an explicit size floored to
// multiples of 32; else calculate_dimensions(Resolution², ratio) for Aspect; else the init
// image's size floored to multiples of 32; else calculate_dimensions for the last condition
// image; else the model's default size.
func (p *Pipeline) OutputSize(r *Request) (width, height int, err error) {
	res := p.resolution(r)
	switch {
	case r.Width != 0 || r.Height != 0:
		if r.Width <= 0 || r.Height <= 0 {
			return 0, 0, fmt.Errorf("%w: %d×%d: give both a width and a height, or neither", ErrSize, r.Width, r.Height)
		}
		width, height = r.Width, r.Height
	case r.Aspect != 0:
		if !(r.Aspect > 0) || math.IsInf(r.Aspect, 0) {
			return 0, 0, fmt.Errorf("%w: aspect ratio %g: it must be a positive width/height", ErrSize, r.Aspect)
		}
		width, height = condimage.CalculateDimensions(float64(res)*float64(res), r.Aspect)
	case r.Init != nil && r.Init.Image != nil:
		width, height = r.Init.Image.Rect.Dx(), r.Init.Image.Rect.Dy()
	case len(r.Images) > 0:
		last := r.Images[len(r.Images)-1]
		if last == nil || last.Rect.Dx() <= 0 || last.Rect.Dy() <= 0 {
			return 0, 0, fmt.Errorf("%w: the last condition image is empty", ErrImages)
		}
		width, height = condimage.CalculateDimensions(float64(res)*float64(res), float64(last.Rect.Dx())/float64(last.Rect.Dy()))
	default:
		width, height = p.defaults.Width, p.defaults.Height
	}
	w, h := width/SizeMultiple*SizeMultiple, height/SizeMultiple*SizeMultiple
	if w < SizeMultiple || h < SizeMultiple {
		return 0, 0, fmt.Errorf("%w: %d×%d is smaller than %d pixels on a side once rounded down to a multiple of %d: choose a larger size or a less extreme aspect ratio",
			ErrSize, width, height, SizeMultiple, SizeMultiple)
	}
	if w > MaxSide || h > MaxSide {
		return 0, 0, fmt.Errorf("%w: %d×%d is larger than %d pixels on a side: choose a smaller size", ErrSize, w, h, MaxSide)
	}
	return w, h, nil
}

// resolution is the request's output_resolution or the model's.
func (p *Pipeline) resolution(r *Request) int {
	if r.Resolution > 0 {
		return r.Resolution
	}
	return p.defaults.OutputResolution
}

// settings are a request's effective steps, CFG scale and schedule grid.
type settings struct {
	width, height int // pixels
	h, w          int // latent grid
	steps         int
	cfg           float64
	sigmas        []float64 // nil: the step-count schedule
	resolution    int
	schedule      sched.Schedule // the full schedule of steps steps
	init          *initPlan      // nil: text-to-image
}

// stepsRun is the number of steps the run does: all of them, or those left after an init
// image's strength skips the first.
func (s settings) stepsRun() int {
	if s.init != nil {
		return s.steps - s.init.start
	}
	return s.steps
}

// resolve checks a request and fills in the model's defaults.
func (p *Pipeline) resolve(r *Request) (settings, error) {
	var s settings
	if len(r.Images) > MaxImages {
		return s, fmt.Errorf("%w: %d condition images; the model takes at most %d", ErrImages, len(r.Images), MaxImages)
	}
	for i, img := range r.Images {
		if img == nil || img.Rect.Dx() <= 0 || img.Rect.Dy() <= 0 {
			return s, fmt.Errorf("%w: condition image %d is empty", ErrImages, i+1)
		}
	}
	if len(r.Images) > 0 && !p.vision {
		return s, fmt.Errorf("%w: this model file has no vision tower (it was converted with --no-vision), so it cannot read condition images: convert the snapshot again without --no-vision", ErrImages)
	}
	if r.Resolution < 0 {
		return s, fmt.Errorf("%w: output resolution %d", ErrSize, r.Resolution)
	}
	var err error
	if s.width, s.height, err = p.OutputSize(r); err != nil {
		return s, err
	}
	s.h, s.w = s.height/16, s.width/16
	s.resolution = p.resolution(r)
	s.steps, s.cfg, s.sigmas = r.Steps, r.CFG, r.Sigmas
	if s.sigmas == nil && r.Steps == 0 && p.defaults.SampleSigmas != nil {
		s.sigmas = p.defaults.SampleSigmas
	}
	switch {
	case s.sigmas != nil:
		if r.Steps != 0 && r.Steps != len(s.sigmas) {
			return s, fmt.Errorf("%w: %d steps requested with a grid of %d sigmas: give one or the other", ErrSettings, r.Steps, len(s.sigmas))
		}
		if len(s.sigmas) == 0 {
			return s, fmt.Errorf("%w: an empty sigma grid", ErrSettings)
		}
		s.steps = len(s.sigmas)
	case s.steps == 0:
		s.steps = p.defaults.Steps
	case s.steps < 0 || s.steps > 1000:
		return s, fmt.Errorf("%w: %d steps: choose between 1 and 1000", ErrSettings, s.steps)
	}
	if s.cfg == 0 {
		s.cfg = p.defaults.CFG
	}
	if !(s.cfg >= 0) || math.IsInf(s.cfg, 0) || s.cfg > 100 {
		return s, fmt.Errorf("%w: CFG scale %g: choose between 1 (off) and 100", ErrSettings, r.CFG)
	}
	if s.schedule, err = p.scheduleFor(r.Scheduler, s.steps, s.sigmas, s.h*s.w); err != nil {
		return s, fmt.Errorf("%w: %v", ErrSettings, err)
	}
	if r.Init != nil {
		if s.init, err = resolveInit(r.Init, &s); err != nil {
			return s, err
		}
	}
	if r.Count < 0 || r.Count > MaxCount {
		return s, fmt.Errorf("%w: a batch of %d images: choose between 1 and %d", ErrSettings, r.Count, MaxCount)
	}
	if err := seed.CheckStrength(r.VariationStrength); err != nil {
		return s, fmt.Errorf("%w: %v", ErrSettings, err)
	}
	if r.Noise != nil && (r.Count > 1 || r.VariationStrength > 0) {
		return s, fmt.Errorf("%w: injected noise makes one image from that noise: it takes no batch count and no variation seed", ErrNoise)
	}
	if r.Noise != nil && len(r.Noise) != s.h*s.w*p.dit.Config.InChannels {
		return s, fmt.Errorf("%w: %d values for a %d×%d latent grid of %d channels (%d values)", ErrNoise, len(r.Noise), s.h, s.w, p.dit.Config.InChannels, s.h*s.w*p.dit.Config.InChannels)
	}
	if err := checkResume(r.Resume, r.Batch(), s.stepsRun(), s.h*s.w*p.dit.Config.InChannels); err != nil {
		return s, err
	}
	return s, nil
}

// guided reports whether a run uses classifier-free guidance (spec §7: scale above 1).
func (s settings) guided() bool { return s.cfg > 1 }
