package savedimage

import (
	"path/filepath"

	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Actions are the buttons over the canvas that act on the saved image shown there. Show in
// Finder (Show in folder on Linux), Copy image and Refine this are off while a preview or an
// unsaved image is shown (the shell's Save to… shows instead while the image could not be
// saved). Continue from this shows only while the saved result of an edit (an inpaint, an
// outpaint) is on the canvas: it makes that result the next start image — the mask cleared, the
// extension reset — so the artist iterates on what was just made; ⌘Z takes the previous start
// back.
type Actions struct {
	Reveal, Copy, Refine, Continue *widget.Button
	shown                          string // the saved file on the canvas, "" for none
	edited                         string // the latest saved result of a run from a start image
	sh                             Shell
}

// New builds the buttons, all off: no saved image is shown yet.
func New(sh Shell) *Actions {
	a := &Actions{sh: sh}
	a.Reveal = widget.NewButtonWithIcon(sh.Desktop.Label(), theme.FolderOpenIcon(), func() { a.RevealFile(a.shown) })
	a.Copy = widget.NewButtonWithIcon("Copy image", theme.ContentCopyIcon(), func() { a.CopyFile(a.shown) })
	a.Refine = widget.NewButtonWithIcon("Refine this", theme.ContentRedoIcon(), func() {
		if a.shown != "" {
			sh.Refine(a.shown)
		}
	})
	a.Continue = widget.NewButtonWithIcon("Continue from this", theme.MediaSkipNextIcon(), func() {
		if a.shown != "" {
			sh.ContinueFrom(a.shown)
		}
	})
	a.Continue.Importance = widget.HighImportance
	a.set("") // not Changed: the shell is still being built
	return a
}

// Show records the saved file on the canvas ("" for none) and turns the buttons on or off.
func (a *Actions) Show(path string) {
	a.set(path)
	if a.sh.Changed != nil {
		a.sh.Changed()
	}
}

func (a *Actions) set(path string) {
	a.shown = path
	for _, b := range []*widget.Button{a.Reveal, a.Copy, a.Refine} {
		if path == "" {
			b.Disable()
		} else {
			b.Enable()
		}
	}
	a.showContinue()
}

// Shown is the saved file on the canvas, or "".
func (a *Actions) Shown() string { return a.shown }

// Edited records path as the latest saved result of a run from a start image: Continue from
// this shows while it is on the canvas.
func (a *Actions) Edited(path string) {
	a.edited = path
	a.showContinue()
}

func (a *Actions) showContinue() {
	if a.shown != "" && a.shown == a.edited {
		a.Continue.Show()
	} else {
		a.Continue.Hide()
	}
}

// RevealFile shows a saved image in the Finder or the file manager (off the UI goroutine); a
// missing tool gets a notice saying what to install.
func (a *Actions) RevealFile(path string) {
	if path == "" {
		return
	}
	d := a.sh.Desktop
	go func() {
		err := d.Reveal(path)
		a.sh.Do(func() {
			if err != nil {
				a.sh.Say("%v", err)
			}
		})
	}()
}

// CopyFile puts a saved image on the clipboard as a picture (off the UI goroutine: the
// clipboard tool may take a moment) and says so.
func (a *Actions) CopyFile(path string) {
	if path == "" {
		return
	}
	d := a.sh.Desktop
	go func() {
		err := d.CopyImage(path)
		a.sh.Do(func() {
			if err != nil {
				a.sh.Say("%v", err)
			} else {
				a.sh.Say("Copied %s to the clipboard.", filepath.Base(path))
			}
		})
	}()
}
