package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Read reads and decodes the checkpoint at path. A damaged file is refused (ErrCorrupt, ErrNewer)
// and left where it is.
func Read(path string) (*Checkpoint, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s cannot be read: %w", path, err)
	}
	c, err := Unmarshal(b)
	if errors.Is(err, ErrCorrupt) {
		return nil, fmt.Errorf("checkpoint %s: %w; it is kept there for inspection: start the image again", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return c, nil
}

// WriteFile writes c to path atomically: a temporary file beside it, fsync, rename, and the
// folder synced, so path is always a whole checkpoint (the previous or this one).
func WriteFile(path string, c *Checkpoint) error {
	b, err := c.Marshal()
	if err != nil {
		return err
	}
	return writeAtomic(path, b)
}

// tempPattern names the temporary files of path's writes (Remove clears leftovers).
func tempPattern(path string) string { return "." + filepath.Base(path) + ".*.tmp" }

// writeAtomic is the temp-fsync-rename write of b to path.
func writeAtomic(path string, b []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := createTemp(dir, tempPattern(path))
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(b); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// tempFile is what writeAtomic needs of a temporary file (a test injects faults).
type tempFile interface {
	Write([]byte) (int, error)
	Sync() error
	Close() error
	Name() string
}

var createTemp = func(dir, pattern string) (tempFile, error) { return os.CreateTemp(dir, pattern) }

// FilesDir is the folder beside the checkpoint at path that holds its stored inputs.
func FilesDir(path string) string { return path + ".files" }

// StoredPath is where the copy of f is kept beside the checkpoint at path: under its digest,
// with its own name (so a run reading it sees the same file name).
func StoredPath(path string, f File) string {
	return filepath.Join(FilesDir(path), f.SHA256, filepath.Base(f.Path))
}

// Store records the input read from src (role: its slot) and keeps a copy of data beside the
// checkpoint at path (once per digest).
func Store(path, role, src string, data []byte) (File, error) {
	sum := sha256.Sum256(data)
	f := File{Role: role, Path: src, SHA256: hex.EncodeToString(sum[:])}
	dst := StoredPath(path, f)
	if _, err := os.Stat(dst); err == nil {
		return f, nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return f, fmt.Errorf("cannot keep a copy of %s beside the checkpoint: %w", src, err)
	}
	if err := writeAtomic(dst, data); err != nil {
		return f, fmt.Errorf("cannot keep a copy of %s beside the checkpoint: %w", src, err)
	}
	return f, nil
}

// Source is the file to read f from on resuming: its original path while that still holds the
// same bytes, else the stored copy. moved reports that the copy is used.
func Source(path string, f File) (src string, moved bool, err error) {
	if b, err := os.ReadFile(f.Path); err == nil {
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) == f.SHA256 {
			return f.Path, false, nil
		}
	}
	stored := StoredPath(path, f)
	b, err := os.ReadFile(stored)
	if err != nil {
		return "", true, fmt.Errorf("%s (%s) is gone or changed and its copy %s cannot be read: %w", f.Path, f.Role, stored, err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != f.SHA256 {
		return "", true, fmt.Errorf("%s (%s) is gone or changed and its copy %s is damaged: start the image again", f.Path, f.Role, stored)
	}
	return stored, true, nil
}

// Remove deletes the checkpoint at path, its stored inputs and any temporary file a write left.
func Remove(path string) error {
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), tempPattern(path)))
	for _, l := range leftovers {
		os.Remove(l)
	}
	err := os.RemoveAll(FilesDir(path))
	if e := os.Remove(path); e != nil && !errors.Is(e, os.ErrNotExist) {
		err = e
	}
	if err != nil && !strings.Contains(err.Error(), "no such file") {
		return fmt.Errorf("cannot remove the checkpoint %s: %w", path, err)
	}
	return nil
}

// WriteAtomic writes b to path atomically (temp file, fsync, rename), as checkpoints are written.
func WriteAtomic(path string, b []byte) error { return writeAtomic(path, b) }
