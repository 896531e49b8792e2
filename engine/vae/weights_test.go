package vae

import (
	"context"
	"slices"
	"testing"

	"easel/engine/ml/cpu"
	"easel/engine/quant"
)

// fiveDSource reports every 4-D conv weight as 5-D [out, in, 1, k, k], the other layout the
// converter may copy from a source (cmf.md §10.4).
type fiveDSource struct{ quant.Source }

func (s fiveDSource) Tensor(name string) (*quant.Tensor, error) {
	t, err := s.Source.Tensor(name)
	if err != nil || len(t.Shape) != 4 {
		return t, err
	}
	v := *t
	v.Shape = []int{t.Shape[0], t.Shape[1], 1, t.Shape[2], t.Shape[3]}
	return &v, nil
}

func TestFiveDimensionalConvWeightsLoadTheSame(t *testing.T) {
	src := openSnapshotVAE(t)
	zn := randomLatents(64, 2, 2, 4)
	var outs [][]float32
	for _, s := range []quant.Source{src, fiveDSource{src}} {
		m, err := Load(cpu.New(), s)
		if err != nil {
			t.Fatal(err)
		}
		img, err := m.Decode(context.Background(), zn)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, img.Pix)
	}
	if !slices.Equal(outs[0], outs[1]) {
		t.Error("5-D conv weights decode differently from 4-D ones")
	}
}
