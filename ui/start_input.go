package ui

import (
	"fmt"
	"os"
	"strings"

	"fyne.io/fyne/v2"

	"easel/app/compose"
	"easel/app/history"
	"easel/engine/imageio"
)

// loadStart reads an image file as the start image off the UI goroutine; a file that cannot be
// used gets the message a condition image would (the same loader and limits).
func (s *window) loadStart(path string) {
	go func() {
		c, err := compose.LoadCondition(path)
		s.deps.Do(func() {
			if err != nil {
				s.say("%v", err)
				return
			}
			s.setStart(c)
			s.say("Starting from %s: paint over what to repaint, or generate to rework the whole image at strength %.2f.", c.Name, s.doc().Strength)
		})
	}()
}

// refine makes a saved image (a result or a history image) the start image.
func (s *window) refine(path string) {
	if path == "" {
		return
	}
	s.loadStart(path)
}

// refineEntry is Refine this on a history image.
func (s *window) refineEntry(e history.Entry) { s.refine(e.Path) }

// pasteStart makes the clipboard's image the start image: the file copied in the Finder, else
// the image itself, else the image file its text names (as Paste does for condition images).
func (s *window) pasteStart(cb fyne.Clipboard) bool {
	if s.deps.ClipboardFile != nil {
		if path := s.deps.ClipboardFile(); path != "" {
			if st, err := os.Stat(path); err == nil && !st.IsDir() {
				s.loadStart(path)
				return true
			}
		}
	}
	if s.deps.ClipboardImage != nil {
		if data := s.deps.ClipboardImage(); len(data) > 0 {
			s.pasted++
			c, err := compose.NewCondition(fmt.Sprintf("pasted image %d", s.pasted), data)
			if err != nil {
				s.say("%v", err)
				return true
			}
			s.setStart(c)
			return true
		}
	}
	if cb == nil {
		return false
	}
	line := clipboardPath(strings.SplitN(strings.TrimSpace(cb.Content()), "\n", 2)[0])
	if line == "" {
		return false
	}
	if st, err := os.Stat(line); err != nil || st.IsDir() {
		s.say("%q is not an image file: copy an image, or an image file's path (%s).", shortText(line), imageio.Formats)
		return true
	}
	s.loadStart(line)
	return true
}

// pasteAsStart is a picture pasted on the window (⌘V outside a condition image's own Paste, the
// Edit menu): the file copied in the Finder, else the clipboard's image, else the image file the
// text names becomes the start image — with a notice, undoable — and an Easel PNG asks what it is
// for (its recipe, the start image, a condition image). typing: the prompt has the focus, so
// text that names no file is pasted as text (false).
func (s *window) pasteAsStart(cb fyne.Clipboard, typing bool) bool {
	if s.deps.ClipboardFile != nil {
		if path := s.deps.ClipboardFile(); path != "" {
			if st, err := os.Stat(path); err == nil && !st.IsDir() {
				s.dropFiles([]string{path}, true)
				return true
			}
		}
	}
	if s.deps.ClipboardImage != nil {
		if data := s.deps.ClipboardImage(); len(data) > 0 {
			s.pasted++
			c, err := compose.NewCondition(fmt.Sprintf("pasted image %d", s.pasted), data)
			if err != nil {
				s.say("%v", err)
				return true
			}
			s.remember("pasting " + c.Name)
			s.setStart(c)
			s.sayKind(noticeSuccess, "%s is the start image: paint over what to repaint, or generate to rework it at strength %.2f (%s takes it back; the Edit menu's Paste as Condition Image makes it a condition image).", upperFirst(c.Name), s.doc().Strength, undoKeyName())
			return true
		}
	}
	if cb == nil {
		return false
	}
	line := clipboardPath(strings.SplitN(strings.TrimSpace(cb.Content()), "\n", 2)[0])
	if st, err := os.Stat(line); err == nil && !st.IsDir() && line != "" {
		s.dropFiles([]string{line}, true)
		return true
	}
	if typing || line == "" {
		return false
	}
	s.say("%q is not an image file: copy an image, or an image file's path (%s).", shortText(line), imageio.Formats)
	return true
}

// pickStart opens the file dialog for the start image.
func (s *window) pickStart() { s.pickImageFile(s.loadStart) }

// maskEdit applies an edit of the whole mask (invert, clear, undo) and shows it.
func (s *window) maskEdit(edit func()) {
	if s.doc().Start == nil {
		return
	}
	edit()
	if !s.canvas.Editing {
		s.showStart()
	}
	s.canvas.Editor.RefreshAll()
	s.maskChanged()
}

// droppedOnStart reports whether a drop at pos (window coordinates) landed on the canvas or the
// start image's slot: such a file becomes the start image instead of a condition image.
func (s *window) droppedOnStart(pos fyne.Position) bool {
	for _, o := range []fyne.CanvasObject{s.canvas.Box, s.work.slot} {
		if o == nil || !o.Visible() {
			continue
		}
		d := fyne.CurrentApp().Driver()
		at := d.AbsolutePositionForObject(o)
		sz := o.Size()
		if pos.X >= at.X && pos.Y >= at.Y && pos.X < at.X+sz.Width && pos.Y < at.Y+sz.Height {
			return true
		}
	}
	return false
}

// undoMask takes the last mask step back (⌘Z outside text fields).
func (s *window) undoMask() {
	if s.doc().Start == nil || !s.doc().Start.Mask.CanUndo() {
		return
	}
	s.maskEdit(func() { s.doc().Start.Mask.Undo() })
}
