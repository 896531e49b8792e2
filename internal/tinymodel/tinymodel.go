// Package tinymodel converts the tiny reference model (internal/golden's snapshot) for tests:
// once per profile and vision choice in a test binary, into a temporary folder that RemoveAll,
// called from the package's TestMain, deletes.
package tinymodel

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/internal/golden"
)

type key struct {
	profile  convert.Profile
	noVision bool
}

var converted struct {
	sync.Mutex
	dir   string
	paths map[key]string
}

// Path is the .cmf of the reference snapshot converted with opts (its Progress is ignored).
func Path(tb testing.TB, opts convert.Options) string {
	tb.Helper()
	converted.Lock()
	defer converted.Unlock()
	k := key{opts.Profile, opts.NoVision}
	if p, ok := converted.paths[k]; ok {
		return p
	}
	snap, err := golden.ModelSnapshot()
	if err != nil {
		tb.Fatal(err)
	}
	if converted.dir == "" {
		if converted.dir, err = os.MkdirTemp("", "easel-tinymodel-"); err != nil {
			tb.Fatal(err)
		}
		converted.paths = map[key]string{}
	}
	name := string(opts.Profile)
	if opts.NoVision {
		name += "-novision"
	}
	path := filepath.Join(converted.dir, name+".cmf")
	if _, err := convert.Convert(context.Background(), snap, path, convert.Options{Profile: opts.Profile, NoVision: opts.NoVision}); err != nil {
		tb.Fatal(err)
	}
	converted.paths[k] = path
	return path
}

// Open maps Path(tb, opts) for the test; the mapping is closed when the test ends.
func Open(tb testing.TB, opts convert.Options) *cmf.File {
	tb.Helper()
	f, err := cmf.Open(Path(tb, opts))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	return f
}

// Copy is a copy of Path(tb, opts) in the test's own temporary folder, for a test that changes
// the file (truncates it, damages it).
func Copy(tb testing.TB, opts convert.Options) string {
	tb.Helper()
	b, err := os.ReadFile(Path(tb, opts))
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "tiny.cmf")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// RemoveAll deletes every converted file; call it from TestMain after m.Run.
func RemoveAll() {
	converted.Lock()
	defer converted.Unlock()
	if converted.dir != "" {
		os.RemoveAll(converted.dir)
	}
	converted.dir, converted.paths = "", nil
}
