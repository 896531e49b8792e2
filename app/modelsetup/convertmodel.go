package modelsetup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"easel/engine/convert"
)

// ConvertSnapshot converts the snapshot at dir into the model file out with profile, then checks
// the result. Before anything is written it makes sure out's disk can hold the file (its size is
// worked out from the snapshot's headers). Cancelling ctx stops the conversion and leaves no file
// behind, partial or otherwise. progress, when not nil, is called from the converting goroutines,
// one call at a time.
func ConvertSnapshot(ctx context.Context, dir, out string, profile convert.Profile, progress func(convert.Progress)) (*Model, error) {
	est, err := convert.EstimateConversion(dir, convert.Options{Profile: profile})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the folder for the model file: %v; choose another place", err)
	}
	// A conversion killed before it could clean up (a crash, a power cut) leaves OUT.partial;
	// the writer would truncate it anyway, so give its space back before measuring.
	if err := os.Remove(partialPath(out)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("cannot remove the unfinished %s left by an earlier conversion: %v; delete it and try again", partialPath(out), err)
	}
	if err := requireSpace(out, est.OutputBytes, "the model file"); err != nil {
		return nil, err
	}
	if _, err := convert.Convert(ctx, dir, out, convert.Options{Profile: profile, Progress: progress}); err != nil {
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			// The writer may report a cancelled read as a write failure; say what happened.
			return nil, fmt.Errorf("conversion cancelled; %s was not written: %w", out, ctx.Err())
		}
		return nil, err
	}
	m, err := Check(out)
	if err != nil {
		return nil, fmt.Errorf("the conversion finished but its result does not open: %v", err)
	}
	return m, nil
}

// partialPath is where engine/cmf writes a model file until it is complete.
func partialPath(out string) string { return out + ".partial" }
