package ui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"easel/app/jobs"
	"easel/app/settings"
	"easel/engine/cmf"
	"easel/engine/mmapfile"
	"easel/engine/pipeline"
)

// buttonIn finds the button labelled text among o's laid-out objects.
func buttonIn(o fyne.CanvasObject, text string) *widget.Button {
	for _, c := range test.LaidOutObjects(o) {
		if b, ok := c.(*widget.Button); ok && b.Text == text {
			return b
		}
	}
	return nil
}

// A job stopped because the model file went away says so under the controls (the file, what
// happened, what to do) and offers to choose the model again; choosing opens the model chooser.
func TestModelFileGoneOffersToChooseItAgain(t *testing.T) {
	const path = "/Volumes/External/qwen-image-2.1.cmf"
	fault := &mmapfile.FaultError{Path: path, Kind: "model file", Remedy: cmf.RemedyFileChanged, Size: 13e9, Now: -1, NowErr: os.ErrNotExist}
	h := newHarnessWith(t, 64e9, func(h *harness, d *Deps) {
		d.Store = &settings.Store{Path: filepath.Join(h.dir, "settings.json")}
		d.Generator = jobs.GeneratorFunc(func(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
			close(events)
			return nil, &pipeline.ModelFileError{Stage: "denoising (step 3 of 20)", Fault: fault}
		})
	})
	test.Type(h.s.prompt.Text, "a lighthouse")
	test.Tap(h.s.generateBtn)
	h.pump("the job's failure", func() bool { return h.s.lostModel.Shown() })
	for _, want := range []string{"Job 1 stopped", path, "is no longer there", "reconnect the drive or choose the model again"} {
		if !strings.Contains(h.s.message.Text, want) {
			t.Errorf("message %q lacks %q", h.s.message.Text, want)
		}
	}
	offer := h.w.Canvas().Overlays().Top()
	if offer == nil {
		t.Fatal("no dialog offers to choose the model again")
	}
	markup := test.RenderObjectToMarkup(offer)
	if !strings.Contains(markup, "The model file changed or went away") || !strings.Contains(markup, path) {
		t.Errorf("the dialog does not say what happened to %s:\n%s", path, markup)
	}
	choose := buttonIn(offer, "Choose the model…")
	if choose == nil {
		t.Fatal("the dialog has no Choose the model… button")
	}
	test.Tap(choose)
	if h.s.lostModel.Shown() {
		t.Error("the offer is still pending after choosing")
	}
	chooser := h.w.Canvas().Overlays().Top()
	if chooser == nil || chooser == offer || buttonIn(chooser, "Open") == nil {
		t.Fatal("choosing did not open the model file chooser")
	}
	if h.s.queue.Pending() != 0 || len(h.s.queue.Jobs()) != 1 || h.s.queue.Jobs()[0].State != jobs.Failed {
		t.Errorf("queue after the failure: %+v", h.s.queue.Jobs())
	}

	// The next job fails the same way; this time the settings dialog (ui/setup) is chosen.
	h.w.Canvas().Overlays().Remove(chooser)
	test.Tap(h.s.generateBtn)
	h.pump("the second job's failure", func() bool { return h.s.lostModel.Shown() })
	offer = h.w.Canvas().Overlays().Top()
	inSettings := buttonIn(offer, "Settings…")
	if inSettings == nil {
		t.Fatal("the dialog has no Settings… button")
	}
	test.Tap(inSettings)
	if form := h.w.Canvas().Overlays().Top(); form == nil || !strings.Contains(test.RenderObjectToMarkup(form), "Model file") {
		t.Error("Settings… did not open the settings dialog with the model file")
	}
	if js := h.s.queue.Jobs(); len(js) != 2 || js[1].State != jobs.Failed {
		t.Errorf("queue after the second failure: %+v", js)
	}
}
