package ui

import (
	"image"
	"path/filepath"
	"strings"

	"easel/engine/imageio"
)

// loadImage reads a past image for the canvas.
func loadImage(path string) (image.Image, error) { return imageio.Load(path) }

// shortPath is a file's name for messages (the folder is in Settings).
func shortPath(p string) string { return filepath.Base(p) }

// upperFirst is s with its first letter in upper case.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
