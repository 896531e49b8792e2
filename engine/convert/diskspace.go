package convert

import (
	"fmt"
	"path/filepath"

	"easel/engine/freespace"
)

// checkFreeSpace fails when the folder that will hold path has less than need bytes available
// (engine/freespace: as the OS's file manager counts it).
func checkFreeSpace(path string, need int64) error {
	dir := filepath.Dir(path)
	free, err := freespace.Available(dir)
	if err != nil {
		return fmt.Errorf("%v; check that the folder exists", err)
	}
	if free < need {
		return fmt.Errorf("not enough free disk space in %s: the model file needs %.2f GB, %.2f GB are free; free some space or write the file to another disk",
			dir, float64(need)/1e9, float64(free)/1e9)
	}
	return nil
}
