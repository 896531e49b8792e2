package desktop

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Trashed is a file moved to the Trash, which Restore puts back.
type Trashed struct {
	Original string // where it was
	InTrash  string // where it is now
	info     string // the freedesktop .trashinfo beside it ("" on macOS)
}

// TrashDir is the Trash of this user on goos: ~/.Trash on macOS, $XDG_DATA_HOME/Trash (by
// default ~/.local/share/Trash) elsewhere, as the freedesktop.org Trash specification has it.
func TrashDir(goos string) (string, error) {
	home, err := os.UserHomeDir()
	if goos == "darwin" {
		if err != nil {
			return "", err
		}
		return filepath.Join(home, ".Trash"), nil
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "Trash"), nil
	}
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "share", "Trash"), nil
}

// Trash moves the file at path into the Trash (with the .trashinfo the file managers read to put
// it back, outside macOS), under a free name.
func (o *Opener) Trash(path string) (Trashed, error) {
	dir, err := TrashDir(o.GOOS)
	if err != nil {
		return Trashed{}, fmt.Errorf("%s was not moved to the Trash: no home folder (%v)", filepath.Base(path), err)
	}
	files := dir
	if o.GOOS != "darwin" {
		files = filepath.Join(dir, "files")
		if err := os.MkdirAll(filepath.Join(dir, "info"), 0o700); err != nil {
			return Trashed{}, fmt.Errorf("%s was not moved to the Trash: %v", filepath.Base(path), err)
		}
	}
	if err := os.MkdirAll(files, 0o700); err != nil {
		return Trashed{}, fmt.Errorf("%s was not moved to the Trash: %v", filepath.Base(path), err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Trashed{}, err
	}
	base, ext := strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs)), filepath.Ext(abs)
	for i := 1; ; i++ {
		name := base + ext
		if i > 1 {
			name = base + " " + strconv.Itoa(i) + ext
		}
		t := Trashed{Original: abs, InTrash: filepath.Join(files, name)}
		if o.GOOS != "darwin" {
			t.info = filepath.Join(dir, "info", name+".trashinfo")
			f, err := os.OpenFile(t.info, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if os.IsExist(err) {
				continue
			}
			if err != nil {
				return Trashed{}, fmt.Errorf("%s was not moved to the Trash: %v", filepath.Base(path), err)
			}
			fmt.Fprintf(f, "[Trash Info]\nPath=%s\nDeletionDate=%s\n", (&url.URL{Path: abs}).EscapedPath(), time.Now().Format("2006-01-02T15:04:05"))
			f.Close()
		} else if _, err := os.Lstat(t.InTrash); err == nil {
			continue
		}
		if err := os.Rename(abs, t.InTrash); err != nil {
			if t.info != "" {
				os.Remove(t.info)
			}
			return Trashed{}, fmt.Errorf("%s was not moved to the Trash (%v): the file is where it was", filepath.Base(path), err)
		}
		return t, nil
	}
}

// Restore puts a trashed file back where it was.
func (t Trashed) Restore() error {
	if _, err := os.Lstat(t.Original); err == nil {
		return fmt.Errorf("%s was not put back: a file of that name is there now", filepath.Base(t.Original))
	}
	if err := os.Rename(t.InTrash, t.Original); err != nil {
		return fmt.Errorf("%s was not put back from the Trash: %v", filepath.Base(t.Original), err)
	}
	if t.info != "" {
		os.Remove(t.info)
	}
	return nil
}
