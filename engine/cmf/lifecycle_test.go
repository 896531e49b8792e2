package cmf

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Require names every missing tensor at once; a missing file is fs.ErrNotExist; a closed file
// answers with ErrClosed instead of touching the released mapping.
func TestRequireMissingAndClosed(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(filepath.Join(dir, "absent.cmf"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "absent.cmf") {
		t.Errorf("opening a missing file: %v", err)
	}

	s := loadSample(t, "processor/tokenizer_config.json")
	path := filepath.Join(dir, "s.cmf")
	s.write(t, path, Options{HeadReserve: 16 << 10})
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Require("dit.img_in.weight", "te.layers.0.mlp.gate_proj.weight"); err != nil {
		t.Errorf("Require of present tensors: %v", err)
	}
	err = f.Require("dit.img_in.weight", "dit.a", "te.b", "vis.c")
	if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "3 required tensors are missing: dit.a, te.b, vis.c") {
		t.Errorf("Require with three missing: %v", err)
	}
	f.Close()
	if _, err := f.Tensor("dit.img_in.weight"); !errors.Is(err, ErrClosed) {
		t.Errorf("Tensor after Close: %v", err)
	}
	if err := f.Verify(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Verify after Close: %v", err)
	}
}
