package desktop

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// TrashDir is the home Trash of this user off macOS: $XDG_DATA_HOME/Trash (by default
// ~/.local/share/Trash), as the freedesktop.org Trash specification has it.
func TrashDir() (string, error) {
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "Trash"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "share", "Trash"), nil
}

// trashFreedesktop moves abs into the home Trash (files/ and a .trashinfo in info/ that the file
// managers read to put it back) under a free name; a file on another volume, which cannot be
// renamed into the home Trash, goes to that volume's own Trash ($topdir/.Trash-$uid, the
// specification's per-volume Trash), never copied.
func trashFreedesktop(abs string) (Trashed, error) {
	home, err := TrashDir()
	if err != nil {
		return Trashed{}, fmt.Errorf("%s was not moved to the Trash: no home folder (%v)", filepath.Base(abs), err)
	}
	t, err := trashInto(home, abs, abs)
	if errors.Is(err, syscall.EXDEV) {
		top, terr := volumeTop(abs)
		if terr != nil {
			return Trashed{}, fmt.Errorf("%s was not moved to the Trash: it is on another volume, whose top folder was not found (%v); the file is where it was", filepath.Base(abs), terr)
		}
		rel, _ := filepath.Rel(top, abs) // the specification: relative to the volume's top
		t, err = trashInto(filepath.Join(top, ".Trash-"+strconv.Itoa(os.Getuid())), abs, rel)
	}
	if err != nil {
		return Trashed{}, fmt.Errorf("%s was not moved to the Trash (%v): the file is where it was", filepath.Base(abs), err)
	}
	return t, nil
}

// trashInto moves abs into the Trash folder dir, recording infoPath as where it was.
func trashInto(dir, abs, infoPath string) (Trashed, error) {
	files, infos := filepath.Join(dir, "files"), filepath.Join(dir, "info")
	for _, d := range []string{files, infos} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return Trashed{}, err
		}
	}
	base, ext := strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs)), filepath.Ext(abs)
	for i := 1; ; i++ {
		name := base + ext
		if i > 1 {
			name = base + " " + strconv.Itoa(i) + ext
		}
		t := Trashed{Original: abs, InTrash: filepath.Join(files, name), info: filepath.Join(infos, name+".trashinfo")}
		// The .trashinfo is made first and exclusively: it reserves the name (the specification's
		// atomic step), so two programs trashing at once cannot take the same one.
		f, err := os.OpenFile(t.info, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if os.IsExist(err) {
			continue
		}
		if err != nil {
			return Trashed{}, err
		}
		_, werr := fmt.Fprintf(f, "[Trash Info]\nPath=%s\nDeletionDate=%s\n", (&url.URL{Path: infoPath}).EscapedPath(), time.Now().Format("2006-01-02T15:04:05"))
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(t.info)
			return Trashed{}, werr
		}
		if _, err := os.Lstat(t.InTrash); err == nil { // a file without its .trashinfo
			os.Remove(t.info)
			continue
		}
		if err := os.Rename(abs, t.InTrash); err != nil {
			os.Remove(t.info)
			return Trashed{}, err
		}
		return t, nil
	}
}

// volumeTop is the top folder of the volume abs is on: the highest folder above it on the same
// device.
func volumeTop(abs string) (string, error) {
	dev, err := deviceOf(filepath.Dir(abs))
	if err != nil {
		return "", err
	}
	top := filepath.Dir(abs)
	for {
		parent := filepath.Dir(top)
		if parent == top {
			return top, nil
		}
		d, err := deviceOf(parent)
		if err != nil || d != dev {
			return top, nil
		}
		top = parent
	}
}

// deviceOf is the device number of the file system path is on.
func deviceOf(path string) (uint64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, fmt.Errorf("%s: no device number on this system", path)
	}
	return uint64(st.Dev), nil
}
