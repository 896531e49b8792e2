package ui

import (
	"image"

	"easel/app/compose"
	"easel/app/settings"
	"easel/engine/pipeline"
	"easel/ui/canvasarea"
	"easel/ui/queue"
	"easel/ui/remote"
)

// buildRemoteWork builds the window's remote work (ui/remote: Render on, Share this Mac, the
// Studio dialog, Render here) around the window's router, queue, settings and canvas; its
// indicator is the window's s.network.
func (s *window) buildRemoteWork() {
	var preview pipeline.PreviewFunc
	if s.deps.Calibrator != nil {
		preview = s.deps.Calibrator.Render
	} else if s.deps.Projection != nil {
		preview = s.deps.Projection.Image
	}
	s.remote = remote.NewWork(remote.Shell{
		Window: s.win, Show: s.show, Model: s.model, Do: s.deps.Do,
		Settings:     func() settings.Settings { return s.deps.Settings },
		KeepSettings: s.keepSettings,
		Secrets:      s.deps.Secrets,
		Queue:        s.queue,
		QueueChanged: func() { s.queueList.Show(s.queue.Jobs()) },
		Submit:       func(d compose.Draft, seed uint64) bool { return s.submit(d, seed) },
		LoRADir:      s.deps.LoRADir, Preview: preview,
		Frame: func(img image.Image, final bool) image.Image {
			if final {
				return canvasarea.FrameFinal(img)
			}
			return canvasarea.FramePreview(img)
		},
		ShowStudioPicture: s.showStudioPicture,
		Progress:          func(line string) { s.progress.Stage.SetText(line) },
		Machine:           thisMachine(),
		RowLabel:          func(prompt string, seed uint64) (string, string) { return queue.SplitSeed(jobLabel(prompt, seed)) },
	}, s.router)
	s.network = s.remote.Network
}

// keepSettings makes ns the window's settings and saves them when the window has a store.
func (s *window) keepSettings(ns settings.Settings) error {
	s.deps.Settings = ns
	if s.deps.Store == nil {
		return nil
	}
	return s.deps.Store.Save(ns)
}

// applyNetwork brings rendering and sharing in line with the settings (at start and after the
// settings dialog saved).
func (s *window) applyNetwork(ns settings.Settings) { s.remote.ApplyNetwork(ns) }

// showStudioPicture shows a studio image rendered here on the canvas with its label, while the
// canvas is the artist's to give: no start image being painted and no picture of theirs on it —
// a saved image, a finished one, or a preview of their job (a studio image never replaces the
// artist's). A job of theirs waiting behind the studio's image has shown nothing yet: the canvas
// shows the studio's picture, labelled, until that job's first preview takes it back.
func (s *window) showStudioPicture(framed image.Image, w, h int, label string) {
	if s.canvas.Editing || (s.canvas.Current != nil && !s.lentShown) {
		return
	}
	s.canvas.ShowPreview(framed, w, h, label)
	s.canvasJob = 0
	s.setShownFile("")
	s.lentShown = true // after setShownFile, which hands the canvas back to the artist
}
