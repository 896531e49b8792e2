package convert

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"easel/engine/cmf"
)

// EnsureSynthetic makes sure path holds a complete synthetic model, writing it when it is
// missing: a file there is kept when it opens as a sound container (cmf.Open checks every bound),
// says it is synthetic, and holds as many tensors as WriteSynthetic would write for opts; it is
// replaced otherwise. A file being written is named path+".partial" until complete, so a stopped
// run leaves nothing that passes. It reports whether it wrote the file.
func EnsureSynthetic(ctx context.Context, path string, opts SyntheticOptions) (wrote bool, err error) {
	want, err := syntheticTensorCount(opts)
	if err != nil {
		return false, err
	}
	f, err := cmf.Open(path)
	switch {
	case err == nil:
		ok := IsSynthetic(f.Header()) && len(f.Entries()) == want
		f.Close()
		if ok {
			return false, nil
		}
		if err := os.Remove(path); err != nil {
			return false, fmt.Errorf("%s is not the synthetic model this version writes and cannot be replaced: %v; delete it", path, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		if err := os.Remove(path); err != nil {
			return false, fmt.Errorf("%s is damaged and cannot be replaced: %v; delete it", path, err)
		}
	}
	if _, err := WriteSynthetic(ctx, path, opts); err != nil {
		return false, err
	}
	return true, nil
}

// syntheticTensorCount is how many tensors WriteSynthetic writes for opts, config blobs included.
func syntheticTensorCount(opts SyntheticOptions) (int, error) {
	files, c, err := opts.configs()
	if err != nil {
		return 0, err
	}
	comps, err := syntheticComponents(c, files)
	if err != nil {
		return 0, err
	}
	profile := opts.Profile
	if profile == "" {
		profile = ProfileCortiq
	}
	items, _, err := plan(comps[0], comps[1], comps[2], profile.codecs(), c.visionConfig != nil)
	if err != nil {
		return 0, err
	}
	blobs, err := c.blobs(c.visionConfig != nil)
	return len(items) + len(blobs), err
}
