package imagework

import (
	"os"
	"strings"

	"fyne.io/fyne/v2"

	"easel/app/compose"
	"easel/engine/imageio"

	"easel/ui/model"
)

// LoadStart reads an image file as the start image off the UI goroutine; a file that cannot be
// used gets the message a condition image would (the same loader and limits).
func (r *Region) LoadStart(path string) {
	go func() {
		c, err := compose.LoadCondition(path)
		r.sh.Do(func() {
			if err != nil {
				r.say("%v", err)
				return
			}
			r.SetStart(c)
			r.say("Starting from %s: paint over what to repaint, or generate to rework the whole image at strength %.2f.", c.Name, r.doc().Strength)
		})
	}()
}

// Refine makes a saved image (a result or a history image) the start image.
func (r *Region) Refine(path string) {
	if path == "" {
		return
	}
	r.LoadStart(path)
}

// pasteStart makes the clipboard's image the start image: the file copied in the Finder, else
// the image itself, else the image file its text names (as Paste does for condition images).
func (r *Region) pasteStart(cb fyne.Clipboard) bool {
	if path := r.copiedFile(); path != "" {
		r.LoadStart(path)
		return true
	}
	if c, ok, err := r.copiedPicture(); ok {
		if err != nil {
			r.say("%v", err)
			return true
		}
		r.SetStart(c)
		return true
	}
	if cb == nil {
		return false
	}
	line := clipboardPath(strings.SplitN(strings.TrimSpace(cb.Content()), "\n", 2)[0])
	if line == "" {
		return false
	}
	if st, err := os.Stat(line); err != nil || st.IsDir() {
		r.say("%q is not an image file: copy an image, or an image file's path (%s).", shortText(line), imageio.Formats)
		return true
	}
	r.LoadStart(line)
	return true
}

// PasteAsStart is a picture pasted on the window (⌘V outside a condition image's own Paste, the
// Edit menu): the file copied in the Finder, else the clipboard's image, else the image file the
// text names becomes the start image — with a notice, undoable — and an Easel PNG asks what it is
// for (its recipe, the start image, a condition image). typing: the prompt has the focus, so
// text that names no file is pasted as text (false).
func (r *Region) PasteAsStart(cb fyne.Clipboard, typing bool) bool {
	if path := r.copiedFile(); path != "" {
		r.DropFiles([]string{path}, true)
		return true
	}
	if c, ok, err := r.copiedPicture(); ok {
		if err != nil {
			r.say("%v", err)
			return true
		}
		r.sh.Remember("pasting " + c.Name)
		r.SetStart(c)
		r.sayKind(model.NoticeSuccess, "%s is the start image: paint over what to repaint, or generate to rework it at strength %.2f (%s takes it back; the Edit menu's Paste as Condition Image makes it a condition image).", upperFirst(c.Name), r.doc().Strength, undoKeyName())
		return true
	}
	if cb == nil {
		return false
	}
	line := clipboardPath(strings.SplitN(strings.TrimSpace(cb.Content()), "\n", 2)[0])
	if st, err := os.Stat(line); err == nil && !st.IsDir() && line != "" {
		r.DropFiles([]string{line}, true)
		return true
	}
	if typing || line == "" {
		return false
	}
	r.say("%q is not an image file: copy an image, or an image file's path (%s).", shortText(line), imageio.Formats)
	return true
}

// pickStart opens the file dialog for the start image.
func (r *Region) pickStart() { r.pickImageFile(r.LoadStart) }

// maskEdit applies an edit of the whole mask (invert, clear, undo) and shows it.
func (r *Region) maskEdit(edit func()) {
	if r.doc().Start == nil {
		return
	}
	edit()
	if !r.canvas.Editing() {
		r.ShowStart()
	}
	r.canvas.RedrawMask()
	r.MaskChanged()
}

// droppedOnStart reports whether a drop at pos (window coordinates) landed on the canvas or the
// start image's slot: such a file becomes the start image instead of a condition image.
func (r *Region) droppedOnStart(pos fyne.Position) bool {
	if r.canvas.Holds(pos) {
		return true
	}
	o := r.panel.slot
	if !o.Visible() || fyne.CurrentApp() == nil {
		return false
	}
	at := fyne.CurrentApp().Driver().AbsolutePositionForObject(o)
	sz := o.Size()
	return pos.X >= at.X && pos.Y >= at.Y && pos.X < at.X+sz.Width && pos.Y < at.Y+sz.Height
}

// UndoMask takes the last mask step back (⌘Z outside text fields).
func (r *Region) UndoMask() {
	if r.doc().Start == nil || !r.doc().Start.Mask.CanUndo() {
		return
	}
	r.maskEdit(func() { r.doc().Start.Mask.Undo() })
}
