package keeping

import (
	"easel/app/settings"

	"easel/ui/model"
)

// Draft keeps the window's draft across launches: the prompt, the everyday settings and the
// canvas document (the start image, its mask, the extension), saved at every submit and when the
// window closes, and resumed at the next launch. It is made before the window's regions (the
// draft is resumed before they are built), so it stands apart from Region.
type Draft struct {
	store   *settings.DraftStore
	model   *model.Window
	written writtenCanvas // the canvas files written last
}

// writtenCanvas is what was written last: the start image (by identity), the mask's edit count
// and the files' names.
type writtenCanvas struct {
	start               *model.StartImage
	maskEdits           int
	written             bool
	startFile, maskFile string
}

// NewDraft keeps m's draft in store (nil: it is not kept).
func NewDraft(store *settings.DraftStore, m *model.Window) *Draft {
	return &Draft{store: store, model: m}
}

// Save keeps the draft and the canvas document for the next launch; maskEdits counts the mask's
// edits (an unchanged start image and mask are not written again). A failure is said.
func (k *Draft) Save(maskEdits int) {
	if k.store == nil {
		return
	}
	saved := k.model.Saved()
	saved.Canvas = k.model.Canvas().Saved()
	if err := k.saveCanvas(saved.Canvas, maskEdits); err != nil {
		k.model.Say(model.NoticeWarning, "The canvas was not kept for next time: %v", err)
		saved.Canvas = nil
	}
	if err := k.store.Save(saved); err != nil {
		k.model.Say(model.NoticeWarning, "The draft was not kept for next time: %v", err)
	}
}

// saveCanvas writes the start image and mask beside the draft (c nil: removes them), unless they
// are the ones written last time, unchanged.
func (k *Draft) saveCanvas(c *settings.Canvas, maskEdits int) error {
	start := k.model.Canvas().Start
	if c == nil {
		k.written = writtenCanvas{}
		return k.store.SaveCanvas(&settings.Canvas{}, nil, nil)
	}
	now := writtenCanvas{start: start, maskEdits: maskEdits, written: true}
	if k.written == now {
		c.Start, c.Mask = k.written.startFile, k.written.maskFile
		return nil
	}
	if err := k.store.SaveCanvas(c, start.Image.Image, start.Mask.Image()); err != nil {
		return err
	}
	now.startFile, now.maskFile = c.Start, c.Mask
	k.written = now
	return nil
}

// Resume starts the model from the draft the last session left, if any; the error says why it
// (or part of it: a mask that could not be read) is not back, for the shell to say once the
// window is up.
func (k *Draft) Resume() error {
	if k.store == nil {
		return nil
	}
	saved, ok, err := k.store.Load()
	if err != nil || !ok {
		return err
	}
	k.model.Resume(saved)
	if saved.Canvas == nil {
		return nil
	}
	start, mask, err := k.store.LoadCanvas(*saved.Canvas)
	if start == nil {
		return err
	}
	c, cerr := model.Resumed(*saved.Canvas, start, mask)
	if cerr != nil {
		return cerr
	}
	k.model.ReplaceCanvas(c)
	return err // a mask that could not be read: the start image is back without it
}
