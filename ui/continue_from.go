package ui

import (
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// "Continue from this": after a run from a start image (an inpaint, an outpaint) the canvas
// offers to make its result the next start image — the mask cleared, the extension reset — so
// the artist iterates on what was just made, as peers do. ⌘Z takes the previous start back.

// newContinueButton is the canvas's Continue from this, hidden until an edit's result is shown.
func newContinueButton(s *window) *widget.Button {
	b := widget.NewButtonWithIcon("Continue from this", theme.MediaSkipNextIcon(), s.continueFromShown)
	b.Importance = widget.HighImportance
	b.Hide()
	return b
}

// showContinue shows Continue from this while the saved result of an edit is on the canvas.
func (s *window) showContinue() {
	if s.shownPath != "" && s.shownPath == s.editedPath {
		s.actions.continueFrom.Show()
	} else {
		s.actions.continueFrom.Hide()
	}
}

// continueFromShown makes the edit's result on the canvas the start image.
func (s *window) continueFromShown() {
	path := s.shownPath
	if path == "" {
		return
	}
	s.remember("Continue from " + shortPath(path))
	s.work.LoadStart(path)
}
