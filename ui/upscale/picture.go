package upscale

import (
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/png" // history images are PNGs
	"os"
	"path/filepath"
	"strings"

	"easel/app/backend"
	"easel/app/memplan"
	"easel/app/upscalers"
	"easel/ui/kit"
)

// upscale upscales a picture by factor with the chosen learned upscaler (learned) or Lanczos,
// off the UI goroutine: the memory prediction first (in the memory panel and under the sheet's
// buttons; an upscale that does not fit is refused), then progress per tile on the progress
// line, Esc or Cancel to stop, and the result saved into the history naming the upscaler.
func (u *Upscaling) upscale(src Source, factor float64, learned bool) {
	if u.cancel != nil {
		u.say("An upscale is running: wait for it, or press Esc to cancel it first.")
		return
	}
	job := Job{Set: src.Set, Source: src.Path, Factor: factor}
	if src.Image != nil {
		job.Image = src.Image // else read from src.Path off the UI goroutine
	}
	name := "Lanczos"
	var entry upscalers.Entry
	var choice *backend.Choice
	if learned {
		var ok bool
		if entry, ok = u.chosen(); !ok {
			u.say("The upscaler %q is not in the upscalers folder any more: choose another in Settings, Upscaler.", u.host.Settings().Upscaler)
			return
		}
		name = entry.Name
		var err error
		if choice, err = u.device(); err != nil {
			u.say("Cannot upscale with %s: %v", name, err)
			return
		}
		p := Predict(entry.Config, src.W, src.H, factor, choice.Metal(), memplan.DeviceBudget(u.host.Settings().Backend))
		u.host.Plan(fmt.Sprintf("Upscale ×%g with %s: %s", factor, name, p.Explain()))
		if u.m.Current() == 0 { // a running job's ledger keeps the panel
			u.host.ShowMemory(fmt.Sprintf("an upscale ×%g with %s", factor, name), p)
		}
		if !p.Fits() {
			u.say("Upscale ×%g with %s does not fit in memory: %s. Try ×2, or Lanczos.", factor, name, p.Explain())
			return
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	u.started(cancel) // Cancel stops it
	u.host.Stage(fmt.Sprintf("Upscaling %s ×%g with %s…", src.Label, factor, name))
	store, now := u.host.History(), u.host.Now()
	go func() {
		defer cancel()
		var err error
		if job.Image == nil {
			job.Image, err = readPicture(src.Path)
		}
		if learned && err == nil {
			job.Runner, err = u.Runners.Open(entry, choice.Device)
			job.Progress = u.shownProgress(ctx, name)
		}
		var res Result
		if err == nil {
			res, err = Run(ctx, job, store, now)
		}
		u.host.Do(func() {
			u.ended()
			if learned && u.host.MemoryBack != nil {
				u.host.MemoryBack() // the memory panel predicts the draft again
			}
			switch {
			case errors.Is(err, context.Canceled):
				u.host.Stage("Upscale cancelled")
				u.inform("The upscale with %s was cancelled; nothing was saved.", name)
			case err != nil:
				u.host.Stage("Upscale failed")
				u.say("Upscale ×%g of %s with %s failed: %v", factor, src.Label, name, err)
			default:
				u.host.Saved(res.Entry)
				u.host.Stage(fmt.Sprintf("Upscaled with %s · saved %s", name, filepath.Base(res.Entry.Path)))
				u.inform("%s", upscaledNotice(src.Label, name, res))
			}
		})
	}()
}

// readPicture reads a saved picture for an upscale.
func readPicture(path string) (*image.NRGBA, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s is not a picture Easel reads: %w", filepath.Base(path), err)
	}
	return kit.NRGBA(img), nil
}

// upscaledNotice says what an upscale made and how it ran (the device, the tiles, a Metal
// decline the CPU took over from).
func upscaledNotice(label, name string, res Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s upscaled ×%g with %s to %d×%d", label, res.Upscale.Factor, name, res.Upscale.Width, res.Upscale.Height)
	if res.Report.Device != "" {
		fmt.Fprintf(&b, " on %s", res.Report.Device)
		if t := res.Report.Tiling; t.Tile > 0 {
			fmt.Fprintf(&b, " in %d² tiles", t.Tile)
		}
	}
	fmt.Fprintf(&b, ": %s.", filepath.Base(res.Entry.Path))
	if res.Report.Notice != "" {
		b.WriteString(" " + res.Report.Notice)
	}
	return b.String()
}

// shownProgress is an upscale's progress callback: each finished tile on the progress line, the
// upscale waiting until the window has shown it (or ctx is cancelled), so a cancel made on seeing
// a tile lands before the next one.
func (u *Upscaling) shownProgress(ctx context.Context, name string) func(upscalers.Progress) {
	return func(p upscalers.Progress) {
		shown := make(chan struct{})
		u.host.Do(func() {
			u.host.Stage(ProgressLine(name, p))
			close(shown)
		})
		select {
		case <-shown:
		case <-ctx.Done():
		}
	}
}
