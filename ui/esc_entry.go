package ui

import (
	"fyne.io/fyne/v2"

	"easel/ui/recipe"
)

// escEntry is a one-line entry on which Escape does what it does everywhere in the window
// (recipe.Entry with the shell's keys).
type escEntry = recipe.Entry

func newEscEntry(s *window) *escEntry { return recipe.NewEntry(s.keys()) }

// keys are the window's keys the recipe's fields answer while they have the focus: Escape, and
// a paste that holds an image (it becomes the start image).
func (s *window) keys() recipe.Keys {
	return recipe.Keys{
		Escape:     s.escapeKey,
		PasteImage: func(cb fyne.Clipboard) bool { return s.work.PasteAsStart(cb, true) },
	}
}
