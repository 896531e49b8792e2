package ml_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"easel/engine/ml"
	"easel/engine/ml/cpu"
	"easel/engine/quant"
)

// countingBackend counts live tensors, to see what a Scope frees.
type countingBackend struct {
	ml.Backend
	live int
}

func (b *countingBackend) New(shape ...int) (ml.Tensor, error) {
	b.live++
	return b.Backend.New(shape...)
}

func (b *countingBackend) Free(t ml.Tensor) {
	b.live--
	b.Backend.Free(t)
}

func TestScopeKeepsTheFirstErrorAndFreesWhatItOwns(t *testing.T) {
	be := &countingBackend{Backend: cpu.New()}
	e := ml.NewScope(be)
	a, b := e.Temp(2, 3), e.Temp(2, 3)
	kept := e.New(2, 3)
	e.Do(e.B.Add(a, a, b))
	if e.Err() != nil {
		t.Fatalf("a valid op failed: %v", e.Err())
	}
	e.Do(e.B.Add(a, a, e.Temp(5)))      // a shape mismatch: the first error
	e.Do(errors.New("a later failure")) // dropped
	if e.Err() == nil || strings.Contains(e.Err().Error(), "later") {
		t.Fatalf("the scope kept %v, want the shape mismatch", e.Err())
	}
	if e.Download(kept) != nil {
		t.Error("Download after a failure returned data")
	}
	e.Release()
	if be.live != 1 {
		t.Errorf("%d tensors live after Release, want 1 (the one New made)", be.live)
	}
	if e.Rows(nil, 0, 1, 3); e.Err() == nil {
		t.Error("no error kept")
	}
}

// mapSource is a quant.Source over a map.
type mapSource map[string]*quant.Tensor

func (s mapSource) Tensor(name string) (*quant.Tensor, error) {
	t, ok := s[name]
	if !ok {
		return nil, errors.New("not in the file")
	}
	return t, nil
}

func f32(vals ...float32) []byte {
	out := make([]byte, 0, 4*len(vals))
	for _, v := range vals {
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
	}
	return out
}

type layer struct {
	W     *quant.Tensor `weight:"proj.weight"`
	Gain  ml.Tensor     `weight:"norm.weight"`
	Other int
}

func TestBinderBindsByTag(t *testing.T) {
	be := cpu.New()
	src := mapSource{
		"m.0.proj.weight": {Name: "m.0.proj.weight", DType: quant.F32, Shape: []int{2, 2}, Data: f32(1, 2, 3, 4)},
		"m.0.norm.weight": {Name: "m.0.norm.weight", DType: quant.F32, Shape: []int{2}, Data: f32(5, 6)},
	}
	shapes := map[string][]int{"m.0.proj.weight": {2, 2}, "m.0.norm.weight": {2}}
	b := &ml.Binder{Src: src, B: be, Network: "test", Shape: ml.ShapeMap(shapes), RowVectors: true}
	var l layer
	if err := b.Bind(&l, "m.0."); err != nil {
		t.Fatal(err)
	}
	if l.W != src["m.0.proj.weight"] {
		t.Error("the matrix is not the source's tensor, in place")
	}
	got, err := be.Download(l.Gain)
	if err != nil || len(got) != 2 || got[0] != 5 || got[1] != 6 || len(l.Gain.Shape()) != 2 {
		t.Errorf("the vector uploaded as %v %v (%v), want [5 6] of shape [1 2]", got, l.Gain.Shape(), err)
	}
	shapes["m.0.proj.weight"] = []int{4, 1}
	if err := b.Bind(&l, "m.0."); err == nil || !strings.Contains(err.Error(), "m.0.proj.weight has shape [2 2]") {
		t.Errorf("a shape mismatch: %v", err)
	}
	if err := b.Bind(&l, "m.1."); err == nil || !strings.Contains(err.Error(), "m.1.proj.weight") {
		t.Errorf("a missing tensor: %v", err)
	}
}

func TestWithContextStopsHeavyOps(t *testing.T) {
	be := cpu.New()
	if ml.WithContext(be, context.Background()) != ml.Backend(be) {
		t.Error("a context that cannot be cancelled wraps the backend")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	wrapped := ml.WithContext(be, ctx)
	x, _ := be.New(1, 2)
	w := &quant.Tensor{Name: "w", DType: quant.F32, Shape: []int{2, 2}, Data: f32(1, 0, 0, 1)}
	if err := wrapped.Linear(x, x, w); !errors.Is(err, context.Canceled) {
		t.Errorf("Linear under a cancelled context: %v", err)
	}
	if err := wrapped.Add(x, x, x); err != nil {
		t.Errorf("a light op under a cancelled context: %v", err)
	}
}
