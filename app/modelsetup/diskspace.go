package modelsetup

import (
	"errors"
	"fmt"
	"path/filepath"

	"easel/engine/freespace"
)

// FreeBytes is the space available to Easel on the disk that holds path, counted as the OS's
// file manager counts it (engine/freespace: purgeable space included on macOS). The path need
// not exist yet: the nearest existing folder above it is measured.
func FreeBytes(path string) (int64, error) { return freespace.Available(path) }

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
