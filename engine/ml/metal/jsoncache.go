package metal

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The self-test and the autotuner each keep one small JSON report per key in a folder of the
// app-support folder; these two functions are that folder's reading and atomic writing.

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
