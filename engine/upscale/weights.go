package upscale

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"easel/engine/safetensors"
	"easel/engine/torchfile"
)

// maxWeightsFile bounds the files read: the largest upscalers this package runs are ~70 MB; a
// file of several gigabytes is a diffusion model, not an upscaler.
const maxWeightsFile = 1 << 30

// weight is one tensor of a state dict, as float32.
type weight struct {
	shape []int
	data  []float32
}

// State is an upscaler's tensors by name, prefixes such as "params_ema." removed.
type State map[string]weight

// ReadState reads the tensors of an upscaler file: .safetensors, or a PyTorch .pth/.pt/.ckpt
// checkpoint (read by engine/torchfile, which runs none of the file's code).
func ReadState(path string) (State, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("upscaler %s: %w", path, err)
	}
	if st.Size() > maxWeightsFile {
		return nil, fmt.Errorf("upscaler %s: %.1f GB is far larger than any upscaler Easel runs (at most ~100 MB); it is probably a diffusion model", filepath.Base(path), float64(st.Size())/(1<<30))
	}
	var tensors []*safetensors.Tensor
	switch strings.ToLower(filepath.Ext(path)) {
	case ".safetensors":
		f, err := safetensors.Open(path)
		if err != nil {
			return nil, fmt.Errorf("upscaler %s: %v (the file is truncated or not a safetensors file: download it again)", filepath.Base(path), err)
		}
		defer f.Close()
		for _, n := range f.Names() {
			tensors = append(tensors, f.Tensor(n))
		}
	case ".pth", ".pt", ".ckpt", ".bin":
		if tensors, err = torchfile.StateDict(path); err != nil {
			return nil, fmt.Errorf("upscaler %w", err)
		}
	default:
		return nil, fmt.Errorf("upscaler %s: Easel reads upscalers from .pth and .safetensors files", filepath.Base(path))
	}
	s := State{}
	for _, t := range tensors {
		switch t.DType {
		case "F32", "F16", "BF16", "F64":
		default:
			continue // num_batches_tracked and the like
		}
		v, err := t.Float32s()
		if err != nil {
			return nil, fmt.Errorf("upscaler %s: %v", filepath.Base(path), err)
		}
		name := t.Name
		for _, p := range []string{"params_ema.", "params.", "module.", "model.module."} {
			name = strings.TrimPrefix(name, p)
		}
		s[name] = weight{shape: append([]int(nil), t.Shape...), data: v}
	}
	if len(s) == 0 {
		return nil, fmt.Errorf("upscaler %s: the file holds no floating-point tensors", filepath.Base(path))
	}
	return s, nil
}
