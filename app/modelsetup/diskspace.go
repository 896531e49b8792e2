package modelsetup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// FreeBytes is the space available to Easel on the disk that holds path. The path need not
// exist yet: the nearest existing folder above it is measured.
func FreeBytes(path string) (int64, error) {
	dir, err := filepath.Abs(path)
	if err != nil {
		return 0, err
	}
	for {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return 0, fmt.Errorf("cannot measure the free space for %s: no folder above it exists", path)
		}
		dir = parent
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("cannot measure the free space of %s: %v", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// ErrNoSpace is the kind of error returned when a disk cannot hold what a step would write.
var ErrNoSpace = errors.New("not enough free disk space")

// requireSpace fails with ErrNoSpace when the disk holding path has less than need bytes free.
func requireSpace(path string, need int64, what string) error {
	free, err := FreeBytes(path)
	if err != nil {
		return err
	}
	if free < need {
		return fmt.Errorf("%w for %s in %s: it needs %s, %s are free; free some space or choose another disk",
			ErrNoSpace, what, filepath.Dir(path), FormatBytes(need), FormatBytes(free))
	}
	return nil
}
