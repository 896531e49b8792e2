package upscale

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"easel/engine/ml"
	"easel/engine/quant"
)

// Model is an upscaler bound to a backend. Its methods may not be called concurrently.
type Model struct {
	cfg    *Config
	be     Backend
	convs  map[string]conv
	slopes map[string]ml.Tensor // SRVGGNetCompact's PReLU slopes by layer name
	bytes  int64                // the weights' float32 bytes
}

// conv is one 3×3 convolution's weight (float32, in host memory: the backend reads it in place or
// converts it) and bias (uploaded).
type conv struct {
	w *quant.Tensor
	b ml.Tensor
}

// Open reads an upscaler file (ReadState), detects its network (Detect) and binds it to be.
func Open(be Backend, path string) (*Model, error) {
	s, err := ReadState(path)
	if err != nil {
		return nil, err
	}
	cfg, canon, err := Detect(s)
	if err != nil {
		return nil, fmt.Errorf("upscaler %s: %w", filepath.Base(path), err)
	}
	m, err := Load(be, cfg, canon)
	if err != nil {
		return nil, fmt.Errorf("upscaler %s: %w", filepath.Base(path), err)
	}
	return m, nil
}

// Load binds the canonical tensors of a detected network (Detect's) to be.
func Load(be Backend, cfg *Config, s State) (*Model, error) {
	if be == nil || cfg == nil {
		return nil, errors.New("upscale.Load needs a backend and a config")
	}
	m := &Model{cfg: cfg, be: be, convs: map[string]conv{}, slopes: map[string]ml.Tensor{}}
	for name, w := range s {
		base, ok := strings.CutSuffix(name, ".weight")
		if !ok {
			continue
		}
		if len(w.shape) == 1 { // a PReLU
			t, err := be.Upload(w.data, len(w.data))
			if err != nil {
				return nil, err
			}
			m.slopes[base] = t
			m.bytes += int64(4 * len(w.data))
			continue
		}
		b, ok := s[base+".bias"]
		if !ok || len(w.shape) != 4 {
			return nil, fmt.Errorf("%s: a convolution without a bias or with shape %v", base, w.shape)
		}
		bt, err := be.Upload(b.data, len(b.data))
		if err != nil {
			return nil, err
		}
		m.convs[base] = conv{w: f32Tensor(name, w), b: bt}
		m.bytes += int64(4 * (len(w.data) + len(b.data)))
	}
	return m, nil
}

func f32Tensor(name string, w weight) *quant.Tensor {
	data := make([]byte, 4*len(w.data))
	for i, v := range w.data {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
	}
	return &quant.Tensor{Name: name, DType: quant.F32, Shape: w.shape, Data: data}
}

// Config is the network's geometry.
func (m *Model) Config() *Config { return m.cfg }

// Backend is the backend the model runs on.
func (m *Model) Backend() Backend { return m.be }

// WeightBytes is the memory the weights take (float32).
func (m *Model) WeightBytes() int64 { return m.bytes }
