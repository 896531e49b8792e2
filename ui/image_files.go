package ui

import (
	"strings"

	"fyne.io/fyne/v2/storage"
)

// How the window takes image files from the file dialog and from the clipboard's text, for the
// condition images and the start image alike.

// imageFileExtensions are the files the image dialogs offer (engine/imageio reads them).
var imageFileExtensions = []string{".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp", ".tif", ".tiff"}

// pickImageFile opens the file dialog for one image and hands its path to use.
func (s *window) pickImageFile(use func(path string)) { s.pickFile(imageFileExtensions, "", use) }

// clipboardPath is a line of copied text as a file path: a file:// URI's path, else the line
// itself, trimmed.
func clipboardPath(line string) string {
	line = strings.TrimSpace(line)
	if u, err := storage.ParseURI(line); err == nil && u.Scheme() == "file" && strings.HasPrefix(line, "file://") {
		return u.Path()
	}
	return line
}
