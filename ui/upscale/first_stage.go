package upscale

import (
	"context"
	"errors"
	"fmt"
	"image"

	"easel/app/hires"
	"easel/app/memplan"
	"easel/app/upscalers"
)

// FirstStageOffer is the hi-res offer's line about its first stage when Settings chooses a
// learned upscaler: its name and the memory it predicts ("" for Lanczos).
func (u *Upscaling) FirstStageOffer(w, h int, factor float64) string {
	e, ok := u.chosen()
	if !ok || factor <= 1 {
		return ""
	}
	metal := false
	if c, err := u.device(); err == nil {
		metal = c.Metal()
	}
	p := Predict(e.Config, w, h, factor, metal, memplan.DeviceBudget(u.host.Settings().Backend))
	return fmt.Sprintf("\nFirst stage: %s (%s).", e.Name, p.Explain())
}

// FirstStage makes the hi-res pass's start image at w×h: with the chosen learned upscaler when
// Settings names one and the pass upscales (off the UI goroutine, progress per tile, Esc
// cancels it), else with Lanczos at once; then hears the image and the upscaler's name.
func (u *Upscaling) FirstStage(img *image.NRGBA, w, h int, factor float64, then func(first *image.NRGBA, upscaler string)) {
	e, ok := u.chosen()
	if !ok || factor <= 1 {
		then(hires.Resize(img, w, h), "Lanczos")
		return
	}
	if u.cancel != nil {
		u.say("An upscale is running: wait for it, or press Esc to cancel it first.")
		return
	}
	choice, err := u.device()
	if err != nil {
		u.say("Cannot upscale with %s: %v", e.Name, err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	u.started(cancel) // Cancel stops it
	u.host.Stage(fmt.Sprintf("First stage: upscaling with %s…", e.Name))
	go func() {
		defer cancel()
		r, err := u.Runners.Open(e, choice.Device)
		var first *image.NRGBA
		var rep upscalers.Report
		if err == nil {
			first, rep, err = hires.FirstStage(ctx, img, w, h, r, u.shownProgress(ctx, e.Name))
		}
		u.host.Do(func() {
			u.ended()
			switch {
			case errors.Is(err, context.Canceled):
				u.host.Stage("Upscale cancelled")
				u.inform("The upscale with %s was cancelled; the hi-res pass did not start.", e.Name)
			case err != nil:
				u.say("The hi-res pass's first stage with %s failed: %v", e.Name, err)
			default:
				if rep.Notice != "" {
					u.inform("%s", rep.Notice)
				}
				then(first, r.Name)
			}
		})
	}()
}
