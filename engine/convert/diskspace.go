package convert

import (
	"fmt"
	"path/filepath"
	"syscall"
)

// checkFreeSpace fails when the folder that will hold path has less than need bytes available.
func checkFreeSpace(path string, need int64) error {
	dir := filepath.Dir(path)
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return fmt.Errorf("cannot check the free space of %s: %v; check that the folder exists", dir, err)
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if free < need {
		return fmt.Errorf("not enough free disk space in %s: the model file needs %.2f GB, %.2f GB are free; free some space or write the file to another disk",
			dir, float64(need)/1e9, float64(free)/1e9)
	}
	return nil
}
