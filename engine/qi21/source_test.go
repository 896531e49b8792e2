package qi21

import (
	"fmt"
	"strings"
	"testing"

	"easel/engine/quant"
	"easel/internal/tinysnapshot"
)

// snapshotSource is the tiny reference snapshot's transformer under .cmf names (internal/tinysnapshot);
// recode, when set, re-encodes the block projections into another codec (q8_2f, q4tp).
type snapshotSource struct {
	base   *tinysnapshot.Source
	recode quant.DType
	cache  map[string]*quant.Tensor
}

func openSnapshot(t testing.TB, recode quant.DType) *snapshotSource {
	return &snapshotSource{base: tinysnapshot.DiT(t), recode: recode, cache: map[string]*quant.Tensor{}}
}

// isProjection reports whether a tensor is one of the block matrices a .cmf stores quantized.
func isProjection(name string) bool {
	return strings.HasPrefix(name, "transformer_blocks.") && !strings.Contains(name, "norm_")
}

func (s *snapshotSource) Tensor(name string) (*quant.Tensor, error) {
	if t, ok := s.cache[name]; ok {
		return t, nil
	}
	t, err := s.base.Tensor(name)
	if t == nil || err != nil {
		return t, err
	}
	if s.recode != 0 && isProjection(strings.TrimPrefix(name, "dit.")) {
		vals, err := quant.Dequantize(t)
		if err != nil {
			return nil, err
		}
		data, err := quant.Encode(s.recode, t.Shape, vals)
		if err != nil {
			return nil, fmt.Errorf("snapshot source: encoding %s as %v: %v", name, s.recode, err)
		}
		t = &quant.Tensor{Name: name, DType: s.recode, Shape: t.Shape, Data: data}
	}
	s.cache[name] = t
	return t, nil
}
