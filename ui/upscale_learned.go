package ui

import (
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/png" // history images are PNGs
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"

	"easel/app/backend"
	"easel/app/hires"
	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/memplan"
	"easel/app/upscalers"
	"easel/ui/gallery"
	"easel/ui/kit"
	"easel/ui/upscale"
)

// upscaling is the learned upscalers' part of the window: the runner held for the chosen
// upscaler, and the cancel of the upscale running (the gallery's, or a hi-res pass's first
// stage), nil when none runs.
type upscaling struct {
	upRunners upscale.Runners
	upCancel  context.CancelFunc
}

// upscalerLibrary is the upscalers folder in Easel's data folder, or nil when it cannot be found.
func (s *window) upscalerLibrary() *upscalers.Library {
	lib, err := upscalers.Default()
	if err != nil {
		return nil
	}
	return lib
}

// chosenUpscaler is the learned upscaler Settings names, when its file is there and usable.
func (s *window) chosenUpscaler() (upscalers.Entry, bool) {
	lib := s.upscalerLibrary()
	if lib == nil {
		return upscalers.Entry{}, false
	}
	return lib.Chosen(s.deps.Settings)
}

// upscaleMenuItems are the gallery cell menu's upscales: ×2 and ×4 with the chosen learned
// upscaler (when Settings names one) and with Lanczos, beside the sheet's hi-res pass.
func (s *window) upscaleMenuItems(c *gallery.Cell) []*fyne.MenuItem {
	var items []*fyne.MenuItem
	e, learned := s.chosenUpscaler()
	for _, f := range []float64{2, 4} {
		if learned {
			items = append(items, fyne.NewMenuItem(fmt.Sprintf("Upscale ×%g with %s", f, e.Name), func() { s.upscaleCell(c, f, true) }))
		}
	}
	for _, f := range []float64{2, 4} {
		items = append(items, fyne.NewMenuItem(fmt.Sprintf("Upscale ×%g with Lanczos", f), func() { s.upscaleCell(c, f, false) }))
	}
	for _, it := range items {
		it.Disabled = kit.NRGBA(c.Final) == nil
	}
	return items
}

// withUpscales is the cell menu with the upscales after its own items.
func (s *window) withUpscales(m *fyne.Menu, c *gallery.Cell) *fyne.Menu {
	if m == nil {
		m = fyne.NewMenu("")
	}
	m.Items = append(m.Items, fyne.NewMenuItemSeparator())
	m.Items = append(m.Items, s.upscaleMenuItems(c)...)
	return m
}

// upscaleDevice is the Metal device the backend setting runs on, nil for the CPU.
func (s *window) upscaleDevice() (*backend.Choice, error) {
	return backend.Choose(s.deps.Settings.Backend)
}

// upscaleSource is a picture to upscale: a batch cell's, or a history image's read from its file.
type upscaleSource struct {
	label string       // "Image 1", a file name
	img   *image.NRGBA // nil: read from path when the upscale runs
	w, h  int
	set   *imagefile.Settings // its recipe, kept in the result (nil: read from path)
	path  string
}

// upscaleCell upscales a batch cell's picture (upscalePicture).
func (s *window) upscaleCell(c *gallery.Cell, factor float64, learned bool) {
	img := kit.NRGBA(c.Final)
	if img == nil {
		return
	}
	s.upscalePicture(upscaleSource{label: fmt.Sprintf("Image %d", c.Index+1), img: img, w: img.Rect.Dx(), h: img.Rect.Dy(), set: c.Set, path: c.Path}, factor, learned)
}

// upscaleEntry upscales a history image (upscalePicture), read from its file.
func (s *window) upscaleEntry(e history.Entry, factor float64, learned bool) {
	f, err := os.Open(e.Path)
	if err != nil {
		s.say("Cannot upscale %s: %v", shortPath(e.Path), err)
		return
	}
	cfg, _, err := image.DecodeConfig(f) // its size, for the prediction; the picture is read off the UI goroutine
	f.Close()
	if err != nil {
		s.say("Cannot upscale %s: it is not a picture Easel reads (%v).", shortPath(e.Path), err)
		return
	}
	s.upscalePicture(upscaleSource{label: filepath.Base(e.Path), w: cfg.Width, h: cfg.Height, set: e.Settings, path: e.Path}, factor, learned)
}

// entryUpscaleItems is a history image's Upscale item: a submenu of the batch cell's upscales
// (×2 and ×4 with the chosen upscaler and with Lanczos), one row so the history's long menu still
// fits a 1280×800 screen.
func (s *window) entryUpscaleItems(e history.Entry) []*fyne.MenuItem {
	var items []*fyne.MenuItem
	if name, ok := s.chosenUpscalerName(); ok {
		for _, f := range []float64{2, 4} {
			items = append(items, fyne.NewMenuItem(fmt.Sprintf("×%g with %s", f, name), func() { s.upscaleEntry(e, f, true) }))
		}
	}
	for _, f := range []float64{2, 4} {
		items = append(items, fyne.NewMenuItem(fmt.Sprintf("×%g with Lanczos", f), func() { s.upscaleEntry(e, f, false) }))
	}
	up := fyne.NewMenuItem("Upscale", nil)
	up.ChildMenu = fyne.NewMenu("", items...)
	return []*fyne.MenuItem{up}
}

// chosenUpscalerName is the chosen learned upscaler's name, when it is usable.
func (s *window) chosenUpscalerName() (string, bool) {
	e, ok := s.chosenUpscaler()
	return e.Name, ok
}

// upscalePicture upscales a picture by factor with the chosen learned upscaler (learned) or
// Lanczos, off the UI goroutine: the memory prediction first (in the memory panel and under the
// sheet's buttons; an upscale that does not fit is refused), then progress per tile on the
// progress line, Esc or Cancel to stop, and the result saved into the history naming the
// upscaler.
func (s *window) upscalePicture(src upscaleSource, factor float64, learned bool) {
	if s.upCancel != nil {
		s.say("An upscale is running: wait for it, or press Esc to cancel it first.")
		return
	}
	job := upscale.Job{Set: src.set, Source: src.path, Factor: factor}
	if src.img != nil {
		job.Image = src.img // else read from src.path off the UI goroutine
	}
	name := "Lanczos"
	var entry upscalers.Entry
	var choice *backend.Choice
	if learned {
		var ok bool
		if entry, ok = s.chosenUpscaler(); !ok {
			s.say("The upscaler %q is not in the upscalers folder any more: choose another in Settings, Upscaler.", s.deps.Settings.Upscaler)
			return
		}
		name = entry.Name
		var err error
		if choice, err = s.upscaleDevice(); err != nil {
			s.say("Cannot upscale with %s: %v", name, err)
			return
		}
		p := upscale.Predict(entry.Config, src.w, src.h, factor, choice.Metal(), memplan.DeviceBudget(s.deps.Settings.Backend))
		s.sheet.SetPlan(fmt.Sprintf("Upscale ×%g with %s: %s", factor, name, p.Explain()))
		if s.model.Current() == 0 { // a running job's ledger keeps the panel
			s.memory.ShowUpscale(fmt.Sprintf("an upscale ×%g with %s", factor, name), p)
		}
		if !p.Fits() {
			s.say("Upscale ×%g with %s does not fit in memory: %s. Try ×2, or Lanczos.", factor, name, p.Explain())
			return
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.upCancel = cancel
	s.updateButtons() // Cancel stops it
	s.progress.Stage.SetText(fmt.Sprintf("Upscaling %s ×%g with %s…", src.label, factor, name))
	store, now := s.deps.History, s.now()
	go func() {
		defer cancel()
		var err error
		if job.Image == nil {
			job.Image, err = readPicture(src.path)
		}
		if learned && err == nil {
			job.Runner, err = s.upRunners.Open(entry, choice.Device)
			job.Progress = s.shownProgress(ctx, name)
		}
		var res upscale.Result
		if err == nil {
			res, err = upscale.Run(ctx, job, store, now)
		}
		s.deps.Do(func() {
			s.upCancel = nil
			s.updateButtons()
			if learned {
				s.draftChanged() // the memory panel predicts the draft again
			}
			switch {
			case errors.Is(err, context.Canceled):
				s.progress.Stage.SetText("Upscale cancelled")
				s.sayKind(noticeInfo, "The upscale with %s was cancelled; nothing was saved.", name)
			case err != nil:
				s.progress.Stage.SetText("Upscale failed")
				s.say("Upscale ×%g of %s with %s failed: %v", factor, src.label, name, err)
			default:
				s.history.AddSession(res.Entry)
				s.progress.Stage.SetText(fmt.Sprintf("Upscaled with %s · saved %s", name, shortPath(res.Entry.Path)))
				s.sayKind(noticeInfo, "%s", upscaledNotice(src.label, name, res))
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
func upscaledNotice(label, name string, res upscale.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s upscaled ×%g with %s to %d×%d", label, res.Upscale.Factor, name, res.Upscale.Width, res.Upscale.Height)
	if res.Report.Device != "" {
		fmt.Fprintf(&b, " on %s", res.Report.Device)
		if t := res.Report.Tiling; t.Tile > 0 {
			fmt.Fprintf(&b, " in %d² tiles", t.Tile)
		}
	}
	fmt.Fprintf(&b, ": %s.", shortPath(res.Entry.Path))
	if res.Report.Notice != "" {
		b.WriteString(" " + res.Report.Notice)
	}
	return b.String()
}

// shownProgress is an upscale's progress callback: each finished tile on the progress line, the
// upscale waiting until the window has shown it (or ctx is cancelled), so a cancel made on seeing
// a tile lands before the next one.
func (s *window) shownProgress(ctx context.Context, name string) func(upscalers.Progress) {
	return func(p upscalers.Progress) {
		shown := make(chan struct{})
		s.deps.Do(func() {
			s.progress.Stage.SetText(upscale.ProgressLine(name, p))
			close(shown)
		})
		select {
		case <-shown:
		case <-ctx.Done():
		}
	}
}

// cancelUpscale stops the upscale running, if any (Esc and Cancel reach it before the queue's
// jobs); it reports whether there was one.
func (s *window) cancelUpscale() bool {
	if s.upCancel == nil {
		return false
	}
	s.upCancel()
	s.progress.Stage.SetText("Cancelling the upscale…")
	return true
}

// closeUpscaling, as the window closes, cancels the upscale running (nothing of it is saved) and
// frees the upscaler held when none runs (a running one stops at its next tile; the process is
// ending).
func (s *window) closeUpscaling() {
	if s.upCancel != nil {
		s.upCancel()
		return
	}
	s.upRunners.Close()
}

// firstStageOffer is the hi-res offer's line about its first stage when Settings chooses a
// learned upscaler: its name and the memory it predicts ("" for Lanczos).
func (s *window) firstStageOffer(w, h int, factor float64) string {
	e, ok := s.chosenUpscaler()
	if !ok || factor <= 1 {
		return ""
	}
	metal := false
	if c, err := s.upscaleDevice(); err == nil {
		metal = c.Metal()
	}
	p := upscale.Predict(e.Config, w, h, factor, metal, memplan.DeviceBudget(s.deps.Settings.Backend))
	return fmt.Sprintf("\nFirst stage: %s (%s).", e.Name, p.Explain())
}

// firstStage makes the hi-res pass's start image at w×h: with the chosen learned upscaler when
// Settings names one and the pass upscales (off the UI goroutine, progress per tile, Esc
// cancels it), else with Lanczos at once; then hears the image and the upscaler's name.
func (s *window) firstStage(img *image.NRGBA, w, h int, factor float64, then func(first *image.NRGBA, upscaler string)) {
	e, ok := s.chosenUpscaler()
	if !ok || factor <= 1 {
		then(hires.Resize(img, w, h), "Lanczos")
		return
	}
	if s.upCancel != nil {
		s.say("An upscale is running: wait for it, or press Esc to cancel it first.")
		return
	}
	choice, err := s.upscaleDevice()
	if err != nil {
		s.say("Cannot upscale with %s: %v", e.Name, err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.upCancel = cancel
	s.updateButtons() // Cancel stops it
	s.progress.Stage.SetText(fmt.Sprintf("First stage: upscaling with %s…", e.Name))
	go func() {
		defer cancel()
		r, err := s.upRunners.Open(e, choice.Device)
		var first *image.NRGBA
		var rep upscalers.Report
		if err == nil {
			first, rep, err = hires.FirstStage(ctx, img, w, h, r, s.shownProgress(ctx, e.Name))
		}
		s.deps.Do(func() {
			s.upCancel = nil
			s.updateButtons()
			switch {
			case errors.Is(err, context.Canceled):
				s.progress.Stage.SetText("Upscale cancelled")
				s.sayKind(noticeInfo, "The upscale with %s was cancelled; the hi-res pass did not start.", e.Name)
			case err != nil:
				s.say("The hi-res pass's first stage with %s failed: %v", e.Name, err)
			default:
				if rep.Notice != "" {
					s.sayKind(noticeInfo, "%s", rep.Notice)
				}
				then(first, r.Name)
			}
		})
	}()
}

// droppedUpscaler sorts a dropped file off the UI goroutine: an upscaler file Easel runs is
// taken (to ask about); a .pth that is not one is taken with a message saying so; anything
// else (a .safetensors LoRA, a picture) is left to the other drops.
func droppedUpscaler(path string, ups *[]upscalers.Entry, refusals *[]string) bool {
	if !upscalers.IsUpscalerFile(path) {
		return false
	}
	e, err := upscalers.Inspect(path)
	switch {
	case err == nil:
		*ups = append(*ups, e)
		return true
	case strings.EqualFold(filepath.Ext(path), ".pth"):
		*refusals = append(*refusals, upscale.Refusal(path, err))
		return true
	}
	return false // a .safetensors that is not an upscaler: a LoRA, as before
}

// askAddUpscalers asks, one file at a time, whether to add each dropped upscaler to the
// upscalers folder (Esc or Not now: not added); each added file is said in the notice.
func (s *window) askAddUpscalers(ups []upscalers.Entry) {
	if len(ups) == 0 {
		return
	}
	lib := s.upscalerLibrary()
	if lib == nil {
		s.say("The upscalers folder cannot be found (set $HOME): %s was not added.", filepath.Base(ups[0].Path))
		return
	}
	e, rest := ups[0], ups[1:]
	s.show(upscale.AddQuestion(e, shortPath(lib.Dir), s.win, func(add bool) {
		if !add {
			s.askAddUpscalers(rest)
			return
		}
		go func() {
			added, err := lib.Add(e.Path)
			s.deps.Do(func() {
				if err != nil {
					s.say("%s was not added: %v", filepath.Base(e.Path), err)
				} else {
					s.sayKind(noticeInfo, "%s", upscale.Added(added))
				}
				s.askAddUpscalers(rest)
			})
		}()
	}))
}
