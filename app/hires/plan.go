package hires

import (
	"fmt"
	"image"
	"math"
	"time"

	"github.com/disintegration/imaging"

	"easel/app/memplan"
)

// Defaults and limits of the second pass.
const (
	// DefaultStrength is the img2img strength of the second pass: enough to add detail at the
	// larger size, little enough to keep the composition.
	DefaultStrength = 0.35
	// MaxSide is the largest side the second pass makes: the model's native 2048².
	MaxSide = 2048
	// sizeMultiple is the output size granularity (the pipeline's).
	sizeMultiple = 32
)

// Factors are the factors the window offers, largest first.
var Factors = []float64{2, 1.5}

// fallbacks are the smaller factors tried when the asked one does not fit.
var fallbacks = []float64{2, 1.75, 1.5, 1.25}

// Size is w×h scaled by factor, each side a multiple of 32 and at most MaxSide (the aspect kept
// when a side is capped).
func Size(w, h int, factor float64) (int, int, error) {
	if w <= 0 || h <= 0 {
		return 0, 0, fmt.Errorf("second pass: the image is %d×%d", w, h)
	}
	if !(factor > 1) || math.IsInf(factor, 0) {
		return 0, 0, fmt.Errorf("second pass: factor %g: choose a factor above 1 (1.5 or 2)", factor)
	}
	fw, fh := float64(w)*factor, float64(h)*factor
	if big := math.Max(fw, fh); big > MaxSide {
		fw, fh = fw*MaxSide/big, fh*MaxSide/big
	}
	nw, nh := int(fw)/sizeMultiple*sizeMultiple, int(fh)/sizeMultiple*sizeMultiple
	if nw <= w && nh <= h {
		return 0, 0, fmt.Errorf("second pass: %d×%d is already at the model's %d pixels a side: nothing larger to make", w, h, MaxSide)
	}
	return nw, nh, nil
}

// Steps is how many steps an img2img pass of n scheduled steps at strength runs (diffusers'
// get_timesteps: the schedule's last n − int(n − n·strength)).
func Steps(n int, strength float64) int {
	return n - int(math.Max(float64(n)-float64(n)*strength, 0))
}

// Resize is img at w×h with a Lanczos filter, as the second pass starts from it.
func Resize(img image.Image, w, h int) *image.NRGBA {
	return imaging.Resize(img, w, h, imaging.Lanczos)
}

// Offer is the window's answer before a second pass: the size, whether it fits, the time it
// should take, and a smaller factor when it does not fit.
type Offer struct {
	Factor        float64
	Width, Height int
	Steps         int // the steps the pass runs
	Prediction    memplan.Prediction
	// Expected is the time the pass should take: its steps at the measured step time scaled by
	// the target tokens (0 when no step time was measured).
	Expected time.Duration
	// Smaller is the largest smaller factor whose size fits (0: none does, or the asked one fits).
	Smaller float64
}

// Fits reports whether the pass fits in memory.
func (o Offer) Fits() bool { return o.Prediction.Fits() }

// Describe is the offer in one sentence for the window.
func (o Offer) Describe() string {
	s := fmt.Sprintf("×%g: %d×%d, %d steps", o.Factor, o.Width, o.Height, o.Steps)
	if o.Expected > 0 {
		s += fmt.Sprintf(", about %s", o.Expected.Round(time.Second))
	}
	if o.Fits() {
		return s + fmt.Sprintf("; fits (peak %s).", memplan.GB(o.Prediction.Peak))
	}
	s += "; does not fit: " + o.Prediction.Explain() + "."
	if o.Smaller > 0 {
		s += fmt.Sprintf(" ×%g fits.", o.Smaller)
	} else {
		s += " No smaller factor fits either."
	}
	return s
}

// Plan plans a second pass over a finished image made with base (its size, prompt, condition
// images): the size for factor, the prediction at that size, the steps at strength out of
// steps, and the expected time from stepTime (the first pass's measured mean step time, at
// base's size; the cost of a step grows with the target tokens, counted here as linear, which
// understates attention's share at the larger size).
func Plan(g memplan.Geometry, base memplan.Plan, budget int64, factor, strength float64, steps int, stepTime time.Duration) (Offer, error) {
	w, h, err := Size(base.Width, base.Height, factor)
	if err != nil {
		return Offer{}, err
	}
	if !(strength > 0 && strength <= 1) {
		return Offer{}, fmt.Errorf("second pass: strength %g: choose above 0 and at most 1", strength)
	}
	o := Offer{Factor: factor, Width: w, Height: h, Steps: Steps(steps, strength)}
	if o.Steps < 1 {
		return Offer{}, fmt.Errorf("second pass: strength %g of %d steps runs no step: raise the strength or the steps", strength, steps)
	}
	o.Prediction = predictAt(g, base, budget, w, h)
	if stepTime > 0 {
		scale := float64(w*h) / float64(base.Width*base.Height)
		o.Expected = time.Duration(float64(stepTime) * scale * float64(o.Steps))
	}
	if !o.Fits() {
		for _, f := range fallbacks {
			if f >= factor {
				continue
			}
			fw, fh, err := Size(base.Width, base.Height, f)
			if err == nil && predictAt(g, base, budget, fw, fh).Fits() {
				o.Smaller = f
				break
			}
		}
	}
	return o, nil
}

// predictAt is base's prediction at w×h as a single image-to-image pass.
func predictAt(g memplan.Geometry, base memplan.Plan, budget int64, w, h int) memplan.Prediction {
	p := base
	p.Width, p.Height, p.Count, p.Init = w, h, 1, true // the finished image is the pass's start image
	return memplan.Predict(g, p, budget)
}
