package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestModelHashIsReadOnceAndKeptBySizeAndTime: a file's SHA-256 is read in the background once;
// another cache over the same folder (a server started later) knows it from the folder without
// reading the file; a file whose modification time changes is read again and gets its new hash.
func TestModelHashIsReadOnceAndKeptBySizeAndTime(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.cmf")
	write := func(content string, at time.Time) string {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(content))
		return hex.EncodeToString(sum[:])
	}
	fresh := func() *hashes {
		return &hashes{dir: filepath.Join(dir, "cache"), known: map[hashKey]string{}, running: map[hashKey]chan struct{}{}}
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	first := write("first model", t0)
	h := fresh()
	if got := h.wait(context.Background(), path); got != first {
		t.Fatalf("hash %q, want %q", got, first)
	}
	later := fresh()
	if got := later.lookup(path); got != first || len(later.running) != 0 {
		t.Errorf("a later cache over the folder: %q (reading: %d), want %q from the folder without reading", got, len(later.running), first)
	}
	second := write("other model", t0.Add(time.Hour)) // same size, new time
	if got := later.lookup(path); got != "" {
		t.Errorf("a changed file's old hash %q was kept", got)
	}
	if got := later.wait(context.Background(), path); got != second {
		t.Errorf("the changed file's hash %q, want %q", got, second)
	}
}
