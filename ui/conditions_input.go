package ui

import (
	"fmt"
	"os"
	"strings"

	"fyne.io/fyne/v2"

	"easel/app/compose"
	"easel/engine/imageio"
)

// dropped is the window's drop handler: a PNG that carries settings restores them (see
// dropFiles); dropped on the canvas or the start image's slot, the first other image becomes the
// start image; every other dropped file becomes a condition image, in the order given, until the
// limit; files that cannot be used get a message, never a crash.
func (s *window) dropped(pos fyne.Position, uris []fyne.URI) {
	var paths []string
	for _, u := range uris {
		if u.Scheme() != "file" {
			s.say("%s is not a file on this Mac: drop image files.", u.String())
			continue
		}
		paths = append(paths, u.Path())
	}
	if s.help.TakesDrop(pos, paths) {
		return // Describe the file dropped on the prompt-help panel (ui/prompthelp)
	}
	s.dropFiles(paths, s.droppedOnStart(pos))
}

// loadedCondition is one image file read for the condition list, or why it could not be.
type loadedCondition struct {
	c   compose.Condition
	err error
}

// loadConditions reads image files (off the UI goroutine: decoding takes a while).
func loadConditions(paths []string) []loadedCondition {
	results := make([]loadedCondition, len(paths))
	for i, p := range paths {
		results[i].c, results[i].err = compose.LoadCondition(p)
	}
	return results
}

// addLoaded adds read images in order and returns the problems, one line each.
func (s *window) addLoaded(results []loadedCondition) []string {
	var problems []string
	for _, r := range results {
		if r.err == nil {
			r.err = s.model.AddCondition(r.c)
		}
		if r.err != nil {
			problems = append(problems, r.err.Error())
		}
	}
	return problems // the prompt help, the size and the memory follow the model's draft
}

// addFiles loads image files off the UI goroutine and adds them in order.
func (s *window) addFiles(paths []string) {
	if len(paths) == 0 {
		return
	}
	go func() {
		results := loadConditions(paths)
		s.deps.Do(func() {
			if problems := s.addLoaded(results); len(problems) > 0 {
				s.say("%s", strings.Join(problems, "\n"))
			} else {
				s.quiet()
			}
		})
	}()
}

// pasteImage adds the file copied in the Finder, else the clipboard's image, else the image file
// its text names. fromButton is false when called from a text field: a paste with none of them
// falls through to ordinary text.
func (s *window) pasteImage(cb fyne.Clipboard, fromButton bool) bool {
	if s.deps.ClipboardFile != nil {
		if path := s.deps.ClipboardFile(); path != "" {
			if st, err := os.Stat(path); err == nil && !st.IsDir() {
				s.dropFiles([]string{path}, false) // an Easel PNG asks: restore, or condition image
				return true
			}
		}
	}
	if s.deps.ClipboardImage != nil {
		if data := s.deps.ClipboardImage(); len(data) > 0 {
			s.pasted++
			c, err := compose.NewCondition(fmt.Sprintf("pasted image %d", s.pasted), data)
			if err == nil {
				err = s.model.AddCondition(c)
			}
			if err != nil {
				s.say("%v", err)
			}
			return true
		}
	}
	if cb == nil {
		return false
	}
	var paths []string
	for _, line := range strings.Split(strings.TrimSpace(cb.Content()), "\n") {
		line = clipboardPath(line)
		if st, err := os.Stat(line); err == nil && !st.IsDir() && line != "" {
			paths = append(paths, line)
		} else if fromButton && line != "" {
			s.say("%q is not an image file: copy an image, or an image file's path (%s).", shortText(line), imageio.Formats)
			return true
		}
	}
	if len(paths) == 0 {
		return false
	}
	s.dropFiles(paths, false) // as a drop: an Easel PNG asks whether to restore it
	return true
}

// pickImages opens the file dialog for a condition image.
func (s *window) pickImages() {
	s.pickImageFile(func(path string) { s.addFiles([]string{path}) })
}

func (s *window) moveCondition(i, delta int) {
	s.model.MoveCondition(i, delta)
}

func (s *window) removeCondition(i int) {
	s.model.RemoveCondition(i)
}

// clipboard is the window's clipboard (nil in tests without one).
func (s *window) clipboard() fyne.Clipboard {
	if a := fyne.CurrentApp(); a != nil {
		return a.Clipboard()
	}
	return nil
}

func shortText(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return s
}

// pasteCondition adds the clipboard's image (or image file) as a condition image.
func (s *window) pasteCondition() {
	if !s.pasteImage(s.clipboard(), true) {
		s.say("The clipboard holds no image and no image file path.")
	}
}
