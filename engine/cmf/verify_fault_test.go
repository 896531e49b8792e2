package cmf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/engine/mmapfile"
)

// A model file truncated while it is open (its drive unplugged, say) fails verification with a
// *mmapfile.FaultError naming it: the hashing workers' fault comes back to the caller, and the
// process lives on.
func TestVerifyOfATruncatedFileReportsTheFault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sample.cmf")
	loadSample(t, "processor/tokenizer_config.json").write(t, path, Options{HeadReserve: 16 << 10})
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Changed(); err != nil {
		t.Fatalf("Changed on the untouched file: %v", err)
	}
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	err = f.Verify(nil)
	var fault *mmapfile.FaultError
	if !errors.As(err, &fault) || fault.Path != path || fault.Now != 4096 || fault.Err == nil {
		t.Fatalf("Verify after truncation: %v (%T), want a fault in %s", err, err, path)
	}
	if !strings.Contains(err.Error(), "the model file "+path) || !strings.Contains(err.Error(), RemedyFileChanged) {
		t.Errorf("message %q", err)
	}
	if err := f.Changed(); !errors.As(err, &fault) {
		t.Errorf("Changed after truncation: %v", err)
	}
}
