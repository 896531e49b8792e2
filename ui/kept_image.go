package ui

import (
	"fmt"
	"image"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/jobs"
)

// keptImage is a finished image that could not be saved (a full disk, an output folder that is
// gone or may not be written): the picture and the settings its PNG will carry, held until it is
// saved in another folder.
type keptImage struct {
	img *image.NRGBA
	set *imagefile.Settings
	at  time.Time // when it was made (its file name's time)
}

// keep holds a job's image whose save failed, says why, and offers another folder.
func (s *window) keep(id jobs.ID, k keptImage, err error) {
	s.kept[id] = k
	s.updateSaveTo()
	s.offerAnotherFolder(id, err)
}

// offerAnotherFolder says why job id's image was not saved and offers to save it elsewhere.
func (s *window) offerAnotherFolder(id jobs.ID, err error) {
	s.say("Job %d's image was not saved: %v. Easel keeps it: choose another folder (Save to… over the picture).", id, err)
	if s.saveOffer != nil {
		s.saveOffer.Hide()
	}
	text := widget.NewLabel(fmt.Sprintf("Job %d's image was not saved: %v.\n\nEasel keeps the image: choose another folder to save it in.", id, err))
	text.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustomConfirm("The image was not saved", "Choose another folder…", "Not now", text, func(choose bool) {
		s.saveOffer = nil
		if choose {
			s.chooseFolderFor(id)
		}
	}, s.win)
	d.Resize(fyne.NewSize(560, 0))
	s.saveOffer = d
	s.show(d)
}

// chooseFolderFor asks for a folder and saves job id's kept image there.
func (s *window) chooseFolderFor(id jobs.ID) {
	dialog.ShowFolderOpen(func(u fyne.ListableURI, err error) {
		if err != nil {
			s.say("The folder could not be opened: %v", err)
			return
		}
		if u != nil {
			s.saveKeptTo(id, u.Path())
		}
	}, s.win)
}

// saveKeptTo writes job id's kept image into folder (off the UI goroutine). On success the image
// joins the history strip and is no longer kept; on failure the offer comes again with the reason.
// The output folder for new images does not change (Settings changes it).
func (s *window) saveKeptTo(id jobs.ID, folder string) {
	k, ok := s.kept[id]
	if !ok {
		return
	}
	store := history.New(folder)
	s.saveJobImage(id, true, store, k.img, k.set, k.at, func(e history.Entry, err error) {
		if err != nil {
			s.offerAnotherFolder(id, err)
			return
		}
		delete(s.kept, id)
		s.history.AddSession(e)
		if s.canvasJob == id {
			s.setShownFile(e.Path)
		}
		s.updateSaveTo()
		s.say("Saved %s. New images still go to %s (change it in Settings).", shortPath(e.Path), shortPath(s.deps.Settings.OutputFolder))
	})
}

// saveKeptShown is the Save to… button: the kept image on the canvas goes to a chosen folder.
func (s *window) saveKeptShown() {
	if _, ok := s.kept[s.canvasJob]; ok && s.shownPath == "" {
		s.chooseFolderFor(s.canvasJob)
	}
}

// updateSaveTo turns Save to… on while the canvas shows a kept (unsaved) image.
func (s *window) updateSaveTo() {
	if _, ok := s.kept[s.canvasJob]; ok && s.shownPath == "" {
		s.actions.saveTo.Enable()
		s.actions.saveTo.Show()
	} else {
		s.actions.saveTo.Disable()
		s.actions.saveTo.Hide()
	}
}
