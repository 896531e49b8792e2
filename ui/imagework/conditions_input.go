package imagework

import (
	"os"
	"strings"

	"fyne.io/fyne/v2"

	"easel/app/compose"
	"easel/engine/imageio"
)

// Drop is the window's drop handler: a PNG that carries settings asks what it is for (see
// dropFiles); dropped on the canvas or the start image's slot, the first other image becomes the
// start image; every other dropped file becomes a condition image, in the order given, until the
// limit; files that cannot be used get a message, never a crash. Another region may take the drop
// first (Shell.TakesDrop: the prompt help's Describe).
func (r *Region) Drop(pos fyne.Position, uris []fyne.URI) {
	var paths []string
	for _, u := range uris {
		if u.Scheme() != "file" {
			r.say("%s is not a file on this Mac: drop image files.", u.String())
			continue
		}
		paths = append(paths, u.Path())
	}
	if r.sh.TakesDrop != nil && r.sh.TakesDrop(pos, paths) {
		return
	}
	r.DropFiles(paths, r.droppedOnStart(pos))
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

// AddConditions adds condition images in order and returns the problems, one line each.
func (r *Region) AddConditions(cs ...compose.Condition) []string {
	loaded := make([]loadedCondition, len(cs))
	for i, c := range cs {
		loaded[i].c = c
	}
	return r.addLoaded(loaded)
}

// addLoaded adds read images in order and returns the problems, one line each.
func (r *Region) addLoaded(results []loadedCondition) []string {
	var problems []string
	for _, l := range results {
		if l.err == nil {
			l.err = r.m.AddCondition(l.c)
		}
		if l.err != nil {
			problems = append(problems, l.err.Error())
		}
	}
	return problems
}

// AddFiles loads image files off the UI goroutine and adds them in order.
func (r *Region) AddFiles(paths []string) {
	if len(paths) == 0 {
		return
	}
	go func() {
		results := loadConditions(paths)
		r.sh.Do(func() {
			if problems := r.addLoaded(results); len(problems) > 0 {
				r.say("%s", strings.Join(problems, "\n"))
			} else {
				r.m.Quiet()
			}
		})
	}()
}

// PasteImage adds a condition image: the file copied in the Finder, else the clipboard's image, else the image file
// its text names. fromButton is false when called from a text field: a paste with none of them
// falls through to ordinary text.
func (r *Region) PasteImage(cb fyne.Clipboard, fromButton bool) bool {
	if path := r.copiedFile(); path != "" {
		r.DropFiles([]string{path}, false) // an Easel PNG asks: restore, or condition image
		return true
	}
	if c, ok, err := r.copiedPicture(); ok {
		if err == nil {
			err = r.m.AddCondition(c)
		}
		if err != nil {
			r.say("%v", err)
		}
		return true
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
			r.say("%q is not an image file: copy an image, or an image file's path (%s).", shortText(line), imageio.Formats)
			return true
		}
	}
	if len(paths) == 0 {
		return false
	}
	r.DropFiles(paths, false) // as a drop: an Easel PNG asks whether to restore it
	return true
}

// PickImages opens the file dialog for a condition image.
func (r *Region) PickImages() {
	r.pickImageFile(func(path string) { r.AddFiles([]string{path}) })
}

// MoveCondition moves condition image i by delta places.
func (r *Region) MoveCondition(i, delta int) {
	r.m.MoveCondition(i, delta) // the prompt help, the size and the memory follow the model's draft
}

// RemoveCondition drops condition image i.
func (r *Region) RemoveCondition(i int) {
	r.m.RemoveCondition(i)
}

// PasteCondition adds the clipboard's image (or image file) as a condition image.
func (r *Region) PasteCondition() {
	if !r.PasteImage(r.clipboard(), true) {
		r.say("The clipboard holds no image and no image file path.")
	}
}
