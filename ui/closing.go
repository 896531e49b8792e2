package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
)

// Closing the window (its close button, ⌘Q / Ctrl+Q, Easel → Quit) never drops work silently:
// with jobs running or queued it asks first; the draft is kept for the next launch either way.

// askClose closes the window, first asking when jobs would be lost.
func (s *studio) askClose() {
	n := s.queue.Pending()
	if n == 0 || s.closeAsked {
		s.win.Close()
		return
	}
	what := fmt.Sprintf("%d jobs are running or queued", n)
	if n == 1 {
		what = "A job is running"
	}
	d := dialog.NewConfirm("Quit and discard the jobs?",
		what+": quitting now stops "+map[bool]string{true: "it", false: "them"}[n == 1]+" and the images are not made. Your prompt and settings are kept for next time.",
		func(discard bool) {
			if discard {
				s.closeAsked = true
				s.win.Close()
			}
		}, s.win)
	d.SetConfirmText("Discard and quit")
	d.SetDismissText("Keep working")
	d.Show()
	s.closeDialog = d
}

// quitItem is the menu's Quit (⌘Q), which closes as the close button does.
func (s *studio) quitItem() *fyne.MenuItem {
	q := fyne.NewMenuItem("Quit", s.askClose)
	q.IsQuit = true
	return q
}

// saveDraft keeps the prompt and the everyday settings for the next launch.
func (s *studio) saveDraft() {
	if s.deps.DraftStore == nil {
		return
	}
	if err := s.deps.DraftStore.Save(s.draft.Saved()); err != nil {
		s.say("The draft was not kept for next time: %v", err)
	}
}

// resumeDraft starts from the draft the last session left, if any.
func (s *studio) resumeDraft() {
	if s.deps.DraftStore == nil {
		return
	}
	saved, ok, err := s.deps.DraftStore.Load()
	if err != nil {
		s.resumeErr = err
		return
	}
	if ok {
		s.draft.Resume(saved)
	}
}
