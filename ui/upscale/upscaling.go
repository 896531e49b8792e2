package upscale

import (
	"context"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"

	"easel/app/backend"
	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/memplan"
	"easel/app/settings"
	"easel/app/upscalers"
	"easel/ui/model"
)

// Host is what the window's upscaling needs of the window around it.
type Host struct {
	// Settings are the window's settings now: the upscaler chosen and the backend.
	Settings func() settings.Settings
	// Library is the upscalers folder (nil when it cannot be found); nil: upscalers.Default.
	Library func() *upscalers.Library
	// History is where an upscale is saved; Saved hears each saved one (the gallery shows it).
	History func() *history.Store
	Saved   func(history.Entry)
	// Stage writes the progress line; Plan the line under the contact sheet's buttons.
	Stage func(text string)
	Plan  func(text string)
	// ShowMemory shows an upscale's prediction in the memory panel while no job runs;
	// MemoryBack puts the draft's prediction back when the upscale ends.
	ShowMemory func(what string, p memplan.UpscalePrediction)
	MemoryBack func()
	// Running is told when an upscale starts or ends (Cancel follows it).
	Running func()
	// Ask shows a question through the window's stack of questions (Esc closes it); Parent is
	// the window it is shown over.
	Ask    func(dialog.Dialog)
	Parent fyne.Window
	Now    func() time.Time
	Do     func(f func())
}

// Upscaling is the window's learned upscalers at work: the runner held for the chosen upscaler,
// and the upscale running (the gallery's, or a hi-res pass's first stage), one at a time.
type Upscaling struct {
	// Runners holds the chosen upscaler between upscales (Settings closes it on a new choice).
	Runners Runners
	m       *model.Window
	host    Host
	cancel  context.CancelFunc // the running upscale's, nil when none runs
}

// New is the window's upscaling on its model m (notices, whether a job runs).
func New(m *model.Window, host Host) *Upscaling {
	if host.Do == nil {
		host.Do = fyne.Do
	}
	if host.Now == nil {
		host.Now = time.Now
	}
	if host.Library == nil {
		host.Library = func() *upscalers.Library {
			lib, err := upscalers.Default()
			if err != nil {
				return nil
			}
			return lib
		}
	}
	return &Upscaling{m: m, host: host}
}

// Running reports whether an upscale runs now.
func (u *Upscaling) Running() bool { return u.cancel != nil }

// Cancel stops the upscale running, if any (Esc and Cancel reach it before the queue's jobs);
// it reports whether there was one.
func (u *Upscaling) Cancel() bool {
	if u.cancel == nil {
		return false
	}
	u.cancel()
	u.host.Stage("Cancelling the upscale…")
	return true
}

// Close, as the window closes, cancels the upscale running (nothing of it is saved) and frees
// the upscaler held when none runs (a running one stops at its next tile; the process is
// ending).
func (u *Upscaling) Close() {
	if u.cancel != nil {
		u.cancel()
		return
	}
	u.Runners.Close()
}

// started marks an upscale running with cancel; ended marks none.
func (u *Upscaling) started(cancel context.CancelFunc) {
	u.cancel = cancel
	if u.host.Running != nil {
		u.host.Running()
	}
}

func (u *Upscaling) ended() {
	u.cancel = nil
	if u.host.Running != nil {
		u.host.Running()
	}
}

// chosen is the learned upscaler Settings names, when its file is there and usable.
func (u *Upscaling) chosen() (upscalers.Entry, bool) {
	lib := u.host.Library()
	if lib == nil {
		return upscalers.Entry{}, false
	}
	return lib.Chosen(u.host.Settings())
}

// device is the Metal device the backend setting runs on, nil for the CPU.
func (u *Upscaling) device() (*backend.Choice, error) {
	return backend.Choose(u.host.Settings().Backend)
}

// say shows a warning, inform an informational notice (ui/model's).
func (u *Upscaling) say(format string, args ...any) {
	u.m.Say(model.NoticeWarning, format, args...)
}

func (u *Upscaling) inform(format string, args ...any) {
	u.m.Say(model.NoticeInfo, format, args...)
}

// Source is a picture to upscale: a batch cell's, or a history image's read from its file.
type Source struct {
	Label string       // "Image 1", a file name
	Image *image.NRGBA // nil: read from Path when the upscale runs
	W, H  int
	Set   *imagefile.Settings // its recipe, kept in the result (nil: read from Path)
	Path  string
}

// CellItems are a batch cell's upscales: ×2 and ×4 with the chosen learned upscaler (when
// Settings names one) and with Lanczos; off while the cell's picture is not finished (nil).
func (u *Upscaling) CellItems(src Source) []*fyne.MenuItem {
	if src.Image != nil {
		src.W, src.H = src.Image.Rect.Dx(), src.Image.Rect.Dy()
	}
	var items []*fyne.MenuItem
	e, learned := u.chosen()
	for _, f := range []float64{2, 4} {
		if learned {
			items = append(items, fyne.NewMenuItem(fmt.Sprintf("Upscale ×%g with %s", f, e.Name), func() { u.upscale(src, f, true) }))
		}
	}
	for _, f := range []float64{2, 4} {
		items = append(items, fyne.NewMenuItem(fmt.Sprintf("Upscale ×%g with Lanczos", f), func() { u.upscale(src, f, false) }))
	}
	for _, it := range items {
		it.Disabled = src.Image == nil
	}
	return items
}

// EntryItems is a history image's Upscale item: a submenu of the batch cell's upscales (×2 and
// ×4 with the chosen upscaler and with Lanczos), one row so the history's long menu still fits a
// 1280×800 screen.
func (u *Upscaling) EntryItems(e history.Entry) []*fyne.MenuItem {
	var items []*fyne.MenuItem
	if up, ok := u.chosen(); ok {
		for _, f := range []float64{2, 4} {
			items = append(items, fyne.NewMenuItem(fmt.Sprintf("×%g with %s", f, up.Name), func() { u.upscaleEntry(e, f, true) }))
		}
	}
	for _, f := range []float64{2, 4} {
		items = append(items, fyne.NewMenuItem(fmt.Sprintf("×%g with Lanczos", f), func() { u.upscaleEntry(e, f, false) }))
	}
	up := fyne.NewMenuItem("Upscale", nil)
	up.ChildMenu = fyne.NewMenu("", items...)
	return []*fyne.MenuItem{up}
}

// upscaleEntry upscales a history image, read from its file.
func (u *Upscaling) upscaleEntry(e history.Entry, factor float64, learned bool) {
	f, err := os.Open(e.Path)
	if err != nil {
		u.say("Cannot upscale %s: %v", filepath.Base(e.Path), err)
		return
	}
	cfg, _, err := image.DecodeConfig(f) // its size, for the prediction; the picture is read off the UI goroutine
	f.Close()
	if err != nil {
		u.say("Cannot upscale %s: it is not a picture Easel reads (%v).", filepath.Base(e.Path), err)
		return
	}
	u.upscale(Source{Label: filepath.Base(e.Path), W: cfg.Width, H: cfg.Height, Set: e.Settings, Path: e.Path}, factor, learned)
}
