package freespace

import (
	"path/filepath"
	"runtime"
	"testing"
)

// TestAvailableMeasuresTheNearestExistingFolder: a path that does not exist yet is measured on
// the folder above it, and on Linux the figure is statfs's f_bavail × f_bsize.
func TestAvailableMeasuresTheNearestExistingFolder(t *testing.T) {
	dir := t.TempDir()
	got, err := Available(filepath.Join(dir, "not", "yet", "model.cmf"))
	if err != nil {
		t.Fatal(err)
	}
	if got <= 0 {
		t.Fatalf("Available = %d bytes on the test's temporary folder", got)
	}
	if runtime.GOOS != "darwin" {
		want, err := statfsAvailable(dir)
		if err != nil {
			t.Fatal(err)
		}
		// The two reads may straddle another process's writes on a shared disk: allow 64 MiB.
		if d := got - want; d > 64<<20 || d < -64<<20 {
			t.Fatalf("Available = %d, statfs says %d", got, want)
		}
	}
}
