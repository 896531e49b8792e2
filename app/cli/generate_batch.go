package cli

import (
	"context"
	"fmt"
	"image"
	"path/filepath"
	"strconv"
	"strings"

	"easel/app/hires"
	"easel/app/imagefile"
	"easel/app/upscalers"
	"easel/engine/pipeline"
)

// batchArgs are the flags of a batch, a variation and a second pass.
type batchArgs struct {
	count             int
	variationSeed     string  // --variation-seed ("" = a random one when a strength is given)
	variationStrength float64 // --variation-strength
	hires             float64 // --hires F (0: no second pass)
	hiresStrength     float64 // --hires-strength
	hiresSteps        int     // --hires-steps (0: the first pass's)
	hiresUpscaler     string  // --hires-upscaler FILE|NAME ("": Lanczos)
	upscaler          *upscalers.Runner
}

// check validates the flags, each with its exit code.
func (b *batchArgs) check(set map[string]bool) *failure {
	if b.count < 1 || b.count > pipeline.MaxCount {
		return fail(ExitSettings, "--count %d: choose between 1 and %d", b.count, pipeline.MaxCount)
	}
	if !(b.variationStrength >= 0 && b.variationStrength <= 1) {
		return fail(ExitSettings, "--variation-strength %g: choose between 0 (the seed's own image) and 1 (the variation seed's)", b.variationStrength)
	}
	if set["hires"] {
		if !(b.hires > 1) || b.hires > 4 {
			return fail(ExitSize, "--hires %g: choose a factor above 1, like 1.5 or 2 (the second pass is at most %d pixels a side)", b.hires, hires.MaxSide)
		}
	} else if set["hires-strength"] || set["hires-steps"] || set["hires-upscaler"] {
		return fail(ExitSettings, "--hires-strength, --hires-steps and --hires-upscaler set the second pass: add --hires F")
	}
	if b.hiresUpscaler != "" && b.upscaler == nil {
		path, code, err := upscalerPath(b.hiresUpscaler, "")
		if err != nil {
			return fail(code, "--hires-upscaler: %v", err)
		}
		if b.upscaler, err = upscalers.Open(path, nil); err != nil {
			return fail(ExitUpscaler, "--hires-upscaler: %v", err)
		}
	}
	if !(b.hiresStrength > 0 && b.hiresStrength <= 1) {
		return fail(ExitSettings, "--hires-strength %g: choose above 0 and at most 1 (default %g)", b.hiresStrength, hires.DefaultStrength)
	}
	if b.hiresSteps < 0 {
		return fail(ExitSettings, "--hires-steps %d: choose at least 1", b.hiresSteps)
	}
	return nil
}

// variation is the variation seed to use: the given one, or rand when none was given.
func (b *batchArgs) variation(rand uint64) (uint64, *failure) {
	if b.variationSeed == "" {
		return rand, nil
	}
	v, err := strconv.ParseUint(b.variationSeed, 10, 64)
	if err != nil {
		return 0, fail(ExitSettings, "--variation-seed %q: give a whole number from 0 to %d", b.variationSeed, uint64(1<<64-1))
	}
	return v, nil
}

// batchOutPaths are the files a batch's images go to: with out NAME.png, NAME-1.png … NAME-N.png
// (NAME.png itself for one image); by default easel-SEED.png each (easel-SEED-var-V.png for a
// variation, whose images share the seed).
func batchOutPaths(out string, req *pipeline.Request) []string {
	n := req.Batch()
	paths := make([]string, n)
	for i := range n {
		seed, v := req.ImageSeeds(i)
		switch {
		case out != "" && n == 1:
			paths[i] = out
		case out != "":
			ext := filepath.Ext(out)
			paths[i] = fmt.Sprintf("%s-%d%s", strings.TrimSuffix(out, ext), i+1, ext)
		case req.VariationStrength > 0:
			paths[i] = fmt.Sprintf("easel-%d-var-%d.png", seed, v)
		default:
			paths[i] = fmt.Sprintf("easel-%d.png", seed)
		}
	}
	return paths
}

// upscalerName is what the PNG records as the hi-res pass's upscaler.
func upscalerName(r *upscalers.Runner) string {
	if r == nil {
		return "Lanczos"
	}
	return r.Name
}

// secondPass runs the --hires pass over a first pass's image img (first's picture as saved): resized with Lanczos (or
// upscaled by --hires-upscaler) by the factor, then image-to-image at the hires strength with the same prompt, condition images,
// LoRAs, seed and variation. It returns the result and what the PNG records of it.
func secondPass(ctx context.Context, p *pipeline.Pipeline, req pipeline.Request, first *pipeline.Result, img *image.NRGBA, b *batchArgs, events chan<- pipeline.Event) (*pipeline.Result, *imagefile.HiresSettings, error) {
	w, h, err := hires.Size(img.Rect.Dx(), img.Rect.Dy(), b.hires)
	if err != nil {
		close(events)
		return nil, nil, fmt.Errorf("%w: %v", pipeline.ErrSize, err)
	}
	next := req
	next.Count, next.Seed, next.Noise, next.NoiseSeed = 0, first.Seed, nil, first.NoiseSeed
	next.VariationSeed, next.VariationStrength = first.VariationSeed, first.VariationStrength
	next.Width, next.Height, next.Aspect = w, h, 0
	start, _, err := hires.FirstStage(ctx, img, w, h, b.upscaler, nil)
	if err != nil {
		close(events)
		return nil, nil, err
	}
	next.Init = &pipeline.InitImage{Image: start, Strength: b.hiresStrength}
	if b.hiresSteps > 0 {
		next.Steps, next.Sigmas = b.hiresSteps, nil
	}
	res, err := p.Run(ctx, next, events)
	if err != nil {
		return nil, nil, err
	}
	return res, &imagefile.HiresSettings{Factor: b.hires, Width: res.Width, Height: res.Height, Strength: b.hiresStrength,
		Steps: res.Steps, StepsRun: res.StepsRun, Upscaler: upscalerName(b.upscaler), Sigmas: res.Sigmas}, nil
}
