package upscale

import (
	"context"
	"fmt"
	"image"
	"math"
	"time"

	"easel/app/hires"
	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/upscalers"
)

// Job is one upscale of a finished image from the gallery.
type Job struct {
	Image image.Image
	// Set is the source's recipe, kept in the result's PNG with the upscale added (nil: read from
	// Source's PNG, else the result records the upscale alone).
	Set    *imagefile.Settings
	Source string
	Factor float64
	// Runner is the learned upscaler; nil resizes with Lanczos.
	Runner *upscalers.Runner
	// Progress hears each finished tile of a learned upscale, or is nil.
	Progress func(upscalers.Progress)
}

// Result is a finished upscale: the picture, its history entry and how the upscaler ran.
type Result struct {
	Image   *image.NRGBA
	Entry   history.Entry
	Report  upscalers.Report
	Upscale imagefile.UpscaleSettings
}

// Run upscales j.Image by j.Factor and saves it into store as a new image of the history whose
// PNG keeps the source's recipe and names the upscaler (imagefile.UpscaleSettings). Cancelling ctx
// stops a learned upscale between tiles; nothing is saved then.
func Run(ctx context.Context, j Job, store *history.Store, now time.Time) (Result, error) {
	b := j.Image.Bounds()
	w, h := int(math.Round(float64(b.Dx())*j.Factor)), int(math.Round(float64(b.Dy())*j.Factor))
	if j.Factor <= 0 || w < 1 || h < 1 {
		return Result{}, fmt.Errorf("an upscale needs a factor above 0, not %g", j.Factor)
	}
	res := Result{Upscale: imagefile.UpscaleSettings{Upscaler: "Lanczos", Factor: j.Factor, Width: w, Height: h}}
	var err error
	if j.Runner == nil {
		res.Image = hires.Resize(j.Image, w, h)
	} else {
		res.Image, res.Report, err = j.Runner.Upscale(ctx, j.Image, upscalers.Request{Width: w, Height: h, Progress: j.Progress})
		if err != nil {
			return Result{}, err
		}
		res.Upscale.Upscaler, res.Upscale.Network = j.Runner.Name, j.Runner.Config().String()
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	set := sourceSettings(j)
	set.Upscale = &res.Upscale
	if res.Entry, err = store.Save(res.Image, set, now); err != nil {
		return Result{}, err
	}
	return res, nil
}

// sourceSettings is a copy of the source's recipe for the result's PNG.
func sourceSettings(j Job) *imagefile.Settings {
	if j.Set != nil {
		s := *j.Set
		return &s
	}
	if j.Source != "" {
		if md, err := imagefile.ReadFile(j.Source); err == nil && md != nil && md.Settings != nil {
			s := *md.Settings
			return &s
		}
	}
	return &imagefile.Settings{}
}

// ProgressLine is the progress line's text while an upscale runs: the tile of the pass.
func ProgressLine(name string, p upscalers.Progress) string {
	line := fmt.Sprintf("Upscaling with %s: tile %d of %d", name, p.Done, p.Total)
	if p.Passes > 1 {
		line += fmt.Sprintf(" (pass %d of %d)", p.Pass, p.Passes)
	}
	return line
}
