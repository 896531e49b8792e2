package qi21

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/engine/quant"
	"easel/engine/safetensors"
	"easel/internal/golden"
)

// snapshotSource is a quant.Source over the tiny Hugging Face snapshot's transformer: names get
// the "dit." prefix and dit.config_json is transformer/config.json, as in a converted .cmf.
// recode, when set, re-encodes the block projections into another codec (q8_2f, q4tp).
type snapshotSource struct {
	file   *safetensors.File
	config []byte
	recode quant.DType
	cache  map[string]*quant.Tensor
}

func openSnapshot(t testing.TB, recode quant.DType) *snapshotSource {
	t.Helper()
	snap, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.Open(filepath.Join(snap, "transformer", "diffusion_pytorch_model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	cfg, err := os.ReadFile(filepath.Join(snap, "transformer", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	return &snapshotSource{file: f, config: cfg, recode: recode, cache: map[string]*quant.Tensor{}}
}

// isProjection reports whether a tensor is one of the block matrices a .cmf stores quantized.
func isProjection(name string) bool {
	return strings.HasPrefix(name, "transformer_blocks.") && !strings.Contains(name, "norm_")
}

func (s *snapshotSource) Tensor(name string) (*quant.Tensor, error) {
	if name == ConfigTensor {
		return &quant.Tensor{Name: name, DType: quant.U8, Shape: []int{len(s.config)}, Data: s.config}, nil
	}
	if t, ok := s.cache[name]; ok {
		return t, nil
	}
	hf, ok := strings.CutPrefix(name, "dit.")
	if !ok {
		return nil, fmt.Errorf("snapshot source: %q is not a dit.* name", name)
	}
	st := s.file.Tensor(hf)
	if st == nil {
		return nil, nil
	}
	d, ok := map[string]quant.DType{"F32": quant.F32, "F16": quant.F16, "BF16": quant.BF16}[st.DType]
	if !ok {
		return nil, fmt.Errorf("snapshot source: %s has dtype %s", hf, st.DType)
	}
	t := &quant.Tensor{Name: name, DType: d, Shape: st.Shape, Data: st.Data}
	if s.recode != 0 && isProjection(hf) {
		vals, err := quant.Dequantize(t)
		if err != nil {
			return nil, err
		}
		data, err := quant.Encode(s.recode, st.Shape, vals)
		if err != nil {
			return nil, fmt.Errorf("snapshot source: encoding %s as %v: %v", hf, s.recode, err)
		}
		t = &quant.Tensor{Name: name, DType: s.recode, Shape: st.Shape, Data: data}
	}
	s.cache[name] = t
	return t, nil
}
