package metal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The self-test, the autotuner and the device policy each keep one small JSON report per key in
// a folder of the app-support folder, named by the key's digest; these functions are that
// folder's naming, reading and atomic writing.

// keyID is a file-name-safe digest of a cache key (its JSON).
func keyID(key any) string {
	b, _ := json.Marshal(key)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:12])
}

// readAllCachedJSON decodes every report in dir (for diagnostics), skipping files that cannot be
// read; none when dir is unset or missing.
func readAllCachedJSON[T any](dir string) []*T {
	if dir == "" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var all []*T
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		var r T
		if readCachedJSON(dir, e.Name(), &r) {
			all = append(all, &r)
		}
	}
	return all
}

// readCachedJSON decodes dir/name into v; false when dir is unset or the file is missing or
// unreadable (the caller then measures again).
func readCachedJSON(dir, name string, v any) bool {
	if dir == "" {
		return false
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	return err == nil && json.Unmarshal(b, v) == nil
}

// writeCachedJSON writes v to dir/name atomically (a temporary file renamed over it); what names
// the cache in errors.
func writeCachedJSON(dir, name, what string, v any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("metal: %s cache: %w", what, err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "report-*.tmp")
	if err != nil {
		return fmt.Errorf("metal: %s cache: %w", what, err)
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("metal: %s cache: %w", what, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("metal: %s cache: %w", what, err)
	}
	return nil
}
