// Package freespace measures the disk space available for a file Easel is about to write, the way
// the OS's own file manager counts it: on macOS the volume's "available capacity for important
// usage" (NSURLVolumeAvailableCapacityForImportantUsageKey), which includes purgeable space APFS
// frees on demand and which Finder shows, where statfs's f_bavail leaves that out and can refuse
// a download Finder says fits; elsewhere statfs's f_bavail.
package freespace

import (
	"fmt"
	"os"
	"path/filepath"
)

// Available is the space in bytes available on the disk that holds path. The path need not exist
// yet: the nearest existing folder above it is measured.
func Available(path string) (int64, error) {
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
	n, err := available(dir)
	if err != nil {
		return 0, fmt.Errorf("cannot measure the free space of %s: %v", dir, err)
	}
	return n, nil
}
