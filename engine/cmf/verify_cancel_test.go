package cmf

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// Cancelling a verification stops it with an error that wraps the context's; an uncancelled one
// over the same file passes.
func TestVerifyContextStopsWhenCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sample.cmf")
	loadSample(t, "processor/tokenizer_config.json").write(t, path, Options{HeadReserve: 16 << 10})
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err = f.VerifyContext(ctx, func(done, total int64) {
		if calls++; calls == 1 {
			cancel() // the artist presses Stop at the first progress report
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled verification returned %v, want context.Canceled", err)
	}
	if err := f.VerifyContext(context.Background(), nil); err != nil {
		t.Fatalf("uncancelled verification: %v", err)
	}
}
