package savedimage

import (
	"fyne.io/fyne/v2"

	"easel/app/desktop"
	"easel/app/history"
)

// Shell is what the region needs from the window around it. Every function runs on the UI
// goroutine; none may be nil except where said.
type Shell struct {
	// Do runs f on the UI goroutine; Say puts a notice in the window.
	Do  func(f func())
	Say func(format string, args ...any)
	// Desktop shows files in the Finder or the file manager and copies images to the clipboard.
	Desktop *desktop.Opener
	// Refine makes the image at path the start image of the next generation; ContinueFrom makes
	// an edit's result the next start image (undoably: the shell remembers the draft first).
	Refine       func(path string)
	ContinueFrom func(path string)
	// Changed follows a change of the file shown on the canvas (Save to… follows it). May be nil.
	Changed func()
	// UseAll, UsePrompt and UseSeed restore an image's recipe whole or in part; Vary makes
	// variations of it; Trash moves its file to the Trash.
	UseAll, UsePrompt, UseSeed, Vary, Trash func(e history.Entry)
	// Upscales are the menu's upscale items for an image, Help its Describe and Check items. Each
	// may be nil.
	Upscales, Help func(e history.Entry) []*fyne.MenuItem
}
