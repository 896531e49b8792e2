package ui

import (
	"image"
	"path/filepath"

	"easel/engine/imageio"
)

// loadImage reads a past image for the canvas.
func loadImage(path string) (image.Image, error) { return imageio.Load(path) }

// shortPath is a file's name for messages (the folder is in Settings).
func shortPath(p string) string { return filepath.Base(p) }
