package imagefile

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// tempFile is what WriteFile writes through (an *os.File; tests substitute a failing one).
type tempFile interface {
	io.Writer
	Sync() error
	Close() error
	Name() string
}

// createTemp makes the temporary file next to the destination (FailWritesAfter replaces it).
func createTemp(dir, pattern string) (tempFile, error) {
	if limit := fullDiskAfter.Load(); limit != nil {
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			return nil, err
		}
		return &fullDiskFile{File: f, limit: *limit}, nil
	}
	return os.CreateTemp(dir, pattern)
}

// WriteFile writes img with s embedded to path atomically: a temporary file in the same folder is
// written, synced and renamed over path. On any failure the temporary file is removed, path is
// untouched, and the error says what went wrong and what to do.
func WriteFile(path string, img image.Image, s *Settings) (err error) {
	return writeAtomic(path, func(w io.Writer) error { return Encode(w, img, s) })
}

// writeAtomic writes what encode writes to path atomically (WriteFile's way).
func writeAtomic(path string, encode func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil {
		return writeError(path, err)
	} else if !st.IsDir() {
		return fmt.Errorf("cannot save %s: %s is a file, not a folder; choose another folder", path, dir)
	}
	f, err := createTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return writeError(path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	if err = encode(w); err != nil {
		return writeError(path, err)
	}
	if err = w.Flush(); err != nil {
		return writeError(path, err)
	}
	if err = f.Sync(); err != nil {
		return writeError(path, err)
	}
	if err = f.Close(); err != nil {
		return writeError(path, err)
	}
	if err = os.Chmod(tmp, 0o644); err != nil {
		return writeError(path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return writeError(path, err)
	}
	syncDir(dir)
	return nil
}

// syncDir makes the rename durable where the platform allows it (best effort).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// writeError says why a save failed in the user's terms.
func writeError(path string, err error) error {
	switch {
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT):
		return fmt.Errorf("cannot save %s: the disk is full; free some space or choose another folder (%w)", path, err)
	case errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS):
		return fmt.Errorf("cannot save %s: Easel may not write to the folder %s; choose another folder or allow writing there (%w)", path, filepath.Dir(path), err)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("cannot save %s: part of the folder's path %s is a file, not a folder; choose another folder (%w)", path, filepath.Dir(path), err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot save %s: the folder %s does not exist; create it or choose another (%w)", path, filepath.Dir(path), err)
	}
	return fmt.Errorf("cannot save %s: %w", path, err)
}

// ReadFile reads the settings and text chunks of the PNG at path.
func ReadFile(path string) (*Metadata, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(bufio.NewReader(f), path)
}
