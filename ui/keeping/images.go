package keeping

import (
	"fmt"
	"image"
	"path/filepath"
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
func (r *Region) keep(id jobs.ID, k keptImage, err error) {
	r.images[id] = k
	r.Refresh()
	r.offerAnotherFolder(id, err)
}

// Unsaved reports whether job id's image is held unsaved, waiting for another folder.
func (r *Region) Unsaved(id jobs.ID) bool {
	_, ok := r.images[id]
	return ok
}

// Offering reports whether the offer of another folder is shown.
func (r *Region) Offering() bool { return r.saveOffer != nil }

// offerAnotherFolder says why job id's image was not saved and offers to save it elsewhere.
func (r *Region) offerAnotherFolder(id jobs.ID, err error) {
	r.say("Job %d's image was not saved: %v. Easel keeps it: choose another folder (Save to… over the picture).", id, err)
	if r.saveOffer != nil {
		r.saveOffer.Hide()
	}
	text := widget.NewLabel(fmt.Sprintf("Job %d's image was not saved: %v.\n\nEasel keeps the image: choose another folder to save it in.", id, err))
	text.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustomConfirm("The image was not saved", "Choose another folder…", "Not now", text, func(choose bool) {
		r.saveOffer = nil
		if choose {
			r.chooseFolderFor(id)
		}
	}, r.shell.Window)
	d.Resize(fyne.NewSize(560, 0))
	r.saveOffer = d
	r.shell.Show(d)
}

// chooseFolderFor asks for a folder and saves job id's kept image there.
func (r *Region) chooseFolderFor(id jobs.ID) {
	dialog.ShowFolderOpen(func(u fyne.ListableURI, err error) {
		if err != nil {
			r.say("The folder could not be opened: %v", err)
			return
		}
		if u != nil {
			r.SaveKeptTo(id, u.Path())
		}
	}, r.shell.Window)
}

// SaveKeptTo writes job id's kept image into folder (off the UI goroutine). On success the image
// joins the history strip and is no longer kept; on failure the offer comes again with the reason.
// The output folder for new images does not change (Settings changes it).
func (r *Region) SaveKeptTo(id jobs.ID, folder string) {
	k, ok := r.images[id]
	if !ok {
		return
	}
	store := history.New(folder)
	r.SaveJobImage(id, true, store, k.img, k.set, k.at, func(e history.Entry, err error) {
		if err != nil {
			r.offerAnotherFolder(id, err)
			return
		}
		delete(r.images, id)
		r.shell.Listed(e)
		r.shell.Saved(id, e.Path)
		r.Refresh()
		r.say("Saved %s. New images still go to %s (change it in Settings).", filepath.Base(e.Path), filepath.Base(r.shell.OutputFolder()))
	})
}

// saveShown is the Save to… button: the kept image on the canvas goes to a chosen folder.
func (r *Region) saveShown() {
	if id, file := r.shell.Showing(); file == "" && r.Unsaved(id) {
		r.chooseFolderFor(id)
	}
}

// Refresh turns Save to… on while the canvas shows a kept (unsaved) image.
func (r *Region) Refresh() {
	if id, file := r.shell.Showing(); file == "" && r.Unsaved(id) {
		r.SaveTo.Enable()
		r.SaveTo.Show()
	} else {
		r.SaveTo.Disable()
		r.SaveTo.Hide()
	}
}
