package imagework

import (
	"path/filepath"
	"runtime"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"

	"easel/app/compose"
	"easel/ui/model"
)

// Region is the image-work region: its section in the recipe column and the actions that make
// and change the start image and the condition images.
type Region struct {
	m      *model.Window
	canvas Canvas
	sh     Shell
	panel  *panel
	// pasted counts the pictures pasted so far, for their names.
	pasted int
	// restoreAsk is the question about a dropped or pasted PNG that carries settings, while it is
	// (or was last) shown.
	restoreAsk *dialog.CustomDialog
}

// New builds the region over the window's model m and its canvas.
func New(m *model.Window, canvas Canvas, sh Shell) *Region {
	r := &Region{m: m, canvas: canvas, sh: sh}
	r.panel = newPanel(r)
	m.Observe(model.CanvasChanged, func(model.Change) { r.panel.follow() })
	return r
}

// Box is the "Work on an image" section, for the recipe column.
func (r *Region) Box() fyne.CanvasObject { return r.panel.accordion }

// Slot is the start image's row in the section (a file dropped on it becomes the start image).
func (r *Region) Slot() fyne.CanvasObject { return r.panel.slot }

// RestoreQuestion is the question a dropped or pasted PNG with settings asked last (nil: none yet).
func (r *Region) RestoreQuestion() *dialog.CustomDialog { return r.restoreAsk }

// Reload shows the canvas document as the model has it now (after an undo, a relaunch, a
// restore): the section's values (which also follow every change of the document) and the start
// image on the canvas, or no editor without one.
func (r *Region) Reload() {
	r.panel.load()
	r.panel.refresh()
	if r.doc().Start != nil {
		r.ShowStart()
	} else {
		r.canvas.StopEditing()
	}
}

// doc is the canvas document as it is now.
func (r *Region) doc() model.Canvas { return r.m.Canvas() }

// draft is a copy of the recipe, for its pointer methods that only read it.
func (r *Region) draft() *compose.Draft {
	d := r.m.Draft()
	return &d
}

// say shows a warning in the window's notice; sayKind a notice of another kind.
func (r *Region) say(format string, args ...any) { r.m.Say(model.NoticeWarning, format, args...) }

func (r *Region) sayKind(kind model.NoticeKind, format string, args ...any) {
	r.m.Say(kind, format, args...)
}

// clipboard is the window's clipboard (nil without one).
func (r *Region) clipboard() fyne.Clipboard {
	if r.sh.Clipboard == nil {
		return nil
	}
	return r.sh.Clipboard()
}

// imageFileExtensions are the files the image dialogs offer (engine/imageio reads them).
var imageFileExtensions = []string{".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp", ".tif", ".tiff"}

// pickImageFile opens the file dialog for one image and hands its path to use.
func (r *Region) pickImageFile(use func(path string)) { r.sh.PickFile(imageFileExtensions, "", use) }

// clipboardPath is a line of copied text as a file path: a file:// URI's path, else the line
// itself, trimmed.
func clipboardPath(line string) string {
	line = strings.TrimSpace(line)
	if u, err := storage.ParseURI(line); err == nil && u.Scheme() == "file" && strings.HasPrefix(line, "file://") {
		return u.Path()
	}
	return line
}

// shortPath is a file's name as the window says it.
func shortPath(p string) string { return filepath.Base(p) }

// shortText is text cut to 60 characters for a notice.
func shortText(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return s
}

// upperFirst is s with its first letter a capital.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// undoKeyName is ⌘Z as this system writes it.
func undoKeyName() string {
	if runtime.GOOS == "darwin" {
		return "⌘Z"
	}
	return "Ctrl+Z"
}
