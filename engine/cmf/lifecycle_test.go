package cmf

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
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

// cortiq's tail append (cmf.md §1) grows the data section over the old vocab, so a vocab section
// inside the data section is legal and must open.
func TestVocabInsideDataOpens(t *testing.T) {
	s := loadSample(t, "processor/tokenizer_config.json")
	path := filepath.Join(t.TempDir(), "s.cmf")
	s.write(t, path, Options{HeadReserve: 16 << 10})
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	env := f.Envelope()
	f.Close()
	// Stretch data_len over the vocab, as an append of more payloads would.
	binary.LittleEndian.PutUint64(b[0x38:], env.Vocab.End()-env.Data.Off)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err = Open(path)
	if err != nil {
		t.Fatalf("a vocab section inside the data section was refused: %v", err)
	}
	defer f.Close()
	if err := f.Verify(nil); err != nil {
		t.Errorf("Verify: %v", err)
	}
	if string(f.Vocab()) != string(s.vocab) {
		t.Error("vocab bytes changed")
	}
}
