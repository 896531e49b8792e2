package ui

import (
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
)

// pickFile opens the file dialog for one file with one of extensions (starting in the folder the
// last file was chosen from, else in folder when it is set and exists) and hands the chosen path
// to use; a file the dialog cannot open is said.
func (s *window) pickFile(extensions []string, folder string, use func(path string)) {
	if s.lastFolder != "" {
		folder = s.lastFolder
	}
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			s.say("The file could not be opened: %v", err)
			return
		}
		if r == nil {
			return
		}
		path := r.URI().Path()
		r.Close()
		s.lastFolder = filepath.Dir(path)
		use(path)
	}, s.win)
	d.SetFilter(storage.NewExtensionFileFilter(extensions))
	if folder != "" {
		if l, err := storage.ListerForURI(storage.NewFileURI(folder)); err == nil {
			d.SetLocation(l)
		}
	}
	s.show(d)
	d.Resize(fyne.NewSize(900, 600)) // after Show: Fyne's file dialog has no window to size before it
}
