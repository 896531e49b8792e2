package desktop

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Trashed is a file moved to the Trash, which Restore puts back.
type Trashed struct {
	Original string // where it was
	InTrash  string // where it is now: the Trash's own answer on macOS (the resulting item URL)
	info     string // the freedesktop .trashinfo beside it ("" on macOS)
}

// Trash moves the file at path into the Trash and says where it went, so Undo can put it back
// (Restore). On macOS the Finder's own Trash does it (NSFileManager trashItemAtURL:resultingItemURL:
// error:, trash_darwin.go): the right Trash for the file's volume, a free name, Put Back in the
// Finder, no access to ~/.Trash needed. Elsewhere it follows the freedesktop.org Trash
// specification (trash_freedesktop.go).
func (o *Opener) Trash(path string) (Trashed, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Trashed{}, err
	}
	if o.GOOS != "darwin" {
		return trashFreedesktop(abs)
	}
	if o.TrashItem == nil {
		return Trashed{}, fmt.Errorf("%s was not moved to the Trash: this build cannot reach the Finder's Trash; delete it in the Finder", filepath.Base(abs))
	}
	inTrash, err := o.TrashItem(abs)
	if err != nil {
		return Trashed{}, fmt.Errorf("%s was not moved to the Trash (%v): the file is where it was", filepath.Base(abs), err)
	}
	if inTrash == "" {
		return Trashed{}, fmt.Errorf("%s was moved to the Trash, but macOS did not say where, so Undo cannot put it back: use Put Back in the Finder's Trash", filepath.Base(abs))
	}
	return Trashed{Original: abs, InTrash: inTrash}, nil
}

// Restore puts a trashed file back where it was (never over a file that is there now).
func (t Trashed) Restore() error {
	if _, err := os.Lstat(t.Original); err == nil {
		return fmt.Errorf("%s was not put back: a file of that name is there now", filepath.Base(t.Original))
	}
	if err := os.Rename(t.InTrash, t.Original); err != nil {
		if errors.Is(err, os.ErrPermission) {
			return fmt.Errorf("%s was not put back: the system did not let Easel take it out of the Trash (%v); open the Trash and use Put Back", filepath.Base(t.Original), err)
		}
		return fmt.Errorf("%s was not put back from the Trash: %v", filepath.Base(t.Original), err)
	}
	if t.info != "" {
		os.Remove(t.info)
	}
	return nil
}
