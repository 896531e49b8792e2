package remote

import (
	"image"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"easel/app/compose"
	"easel/app/jobs"
	"easel/app/settings"
	"easel/engine/pipeline"
	"easel/ui/model"
)

// Shell is what remote work asks of the window that holds it: nothing here reaches into the
// window's widgets or state but through these. Every function is called on the UI goroutine.
type Shell struct {
	// Window is the parent of the dialogs; Show puts one on screen (the window's question stack,
	// so Esc closes it).
	Window fyne.Window
	Show   func(dialog.Dialog)
	// Model is the window's model: its notices, and whether a job of the artist's runs.
	Model *model.Window
	// Do runs a function on the UI goroutine, later (from any goroutine).
	Do func(func())
	// Settings are the window's settings now; KeepSettings makes ns the window's and saves them
	// (the error says why they were not saved).
	Settings     func() settings.Settings
	KeepSettings func(ns settings.Settings) error
	// Secrets keeps the studio's token (nil: not kept).
	Secrets *settings.Secrets
	// Queue is the window's queue: shared with other machines, and the studio's jobs wait for it;
	// QueueChanged shows its rows again (a studio row came or went, or a job's placement changed).
	Queue        *jobs.Queue
	QueueChanged func()
	// Submit queues a draft with a seed again (Render here).
	Submit func(d compose.Draft, seed uint64) bool
	// LoRADir is the LoRA folder the shared server reads from; Preview renders its step previews.
	LoRADir string
	Preview pipeline.PreviewFunc
	// Frame composes a studio image rendered here for the canvas (final: the finished image, else
	// a step's preview); it is called off the UI goroutine, as compositing takes a while.
	// ShowStudioPicture puts it on the canvas with its label, if the canvas is the artist's to
	// give; Progress says the studio's step on the progress line.
	Frame             func(img image.Image, final bool) image.Image
	ShowStudioPicture func(framed image.Image, w, h int, label string)
	Progress          func(line string)
	// Machine names the computer the window runs on ("this Mac"); RowLabel is a job's queue
	// row text from its prompt and seed, split before the seed (right: "seed N").
	Machine  string
	RowLabel func(prompt string, seed uint64) (head, right string)
}

// Work is the window's remote work: where its jobs render (Router and Settings → Render on),
// sharing this Mac's queue (Settings → Share), the Studio dialog (a hub of its own, rendering
// on a studio, lending this Mac), the indicator under the canvas that says all of it, and the
// offer to render a job here when the machine it rendered on went away.
type Work struct {
	sh     Shell
	Router *Router
	// Network is the indicator: where jobs render, and whether this machine is shared or lent.
	Network *widget.Label

	share        *sharing        // the window's own server while "Share this Mac" is on (sharing.go)
	studioShare  *studioShare    // Studio…'s hub (studio_share.go)
	studioRender *StudioRenderOn // Studio…'s Render on a studio (studio_render_on.go)
	studioLend   *Lend           // Studio…'s Lend this Mac (studio_lend.go)
	renderHere   *dialog.ConfirmDialog
}

// NewWork is the window's remote work, sending the window's jobs through r.
func NewWork(sh Shell, r *Router) *Work {
	w := &Work{sh: sh, Router: r}
	w.Network = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	w.Network.Importance = widget.HighImportance
	w.Network.Truncation = fyne.TextTruncateEllipsis
	w.Network.Hide()
	return w
}

// say shows a notice in the window's one place for notices.
func (w *Work) say(kind model.NoticeKind, format string, args ...any) {
	w.sh.Model.Say(kind, format, args...)
}

// keep makes ns the window's settings and saves them, saying so when they could not be saved.
func (w *Work) keep(ns settings.Settings) {
	if err := w.sh.KeepSettings(ns); err != nil {
		w.say(model.NoticeWarning, "Settings were not saved: %v", err)
	}
}

// Leave stops sharing, closes the studio's hub and hands the studio's job in hand back (the
// window is closing; before its queue stops).
func (w *Work) Leave() {
	w.stopSharing()
	if w.studioShare != nil {
		w.studioShare.close()
	}
	w.closeLend()
}

// Close disconnects from the studio the window's jobs rendered on (after the queue stopped).
func (w *Work) Close() {
	if w.studioRender != nil && w.studioRender.gen != nil {
		w.studioRender.gen.Close()
	}
}

// RenderHere is the offer to render a job here while it is shown (nil: none yet).
func (w *Work) RenderHere() *dialog.ConfirmDialog { return w.renderHere }
