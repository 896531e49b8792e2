package ml_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
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

func TestScopeFreeDropsOnlyWhatItOwns(t *testing.T) {
	be := &countingBackend{Backend: cpu.New()}
	e := ml.NewScope(be)
	input := e.New(2, 2) // the caller's
	a, b := e.Temp(2, 2), e.Temp(2, 2)
	e.Free(a)
	if be.live != 2 {
		t.Fatalf("%d tensors live after freeing one of two temporaries, want 2", be.live)
	}
	e.Free(a)     // already gone: nothing happens
	e.Free(input) // not the scope's: left alone
	e.Free(nil)
	if be.live != 2 {
		t.Fatalf("%d tensors live, want 2", be.live)
	}
	e.Do(e.B.Add(b, b, input))
	e.Release()
	if be.live != 1 || e.Err() != nil {
		t.Errorf("%d tensors live after Release (want 1, the caller's), error %v", be.live, e.Err())
	}
}

// conv2 is a part with a weight and a bias, bound under its field's tag.
type conv2 struct {
	W    *quant.Tensor `weight:"weight"`
	Bias ml.Tensor     `weight:"bias"`
}

type block struct {
	Norm     ml.Tensor `weight:"norm.gamma"`
	Conv     conv2     `weight:"conv"`
	Shortcut *conv2    `weight:"shortcut"` // only where the config calls for it
	Skipped  *conv2    `weight:"absent"`   // nil: left out
}

type stack struct {
	Blocks []block `weight:"blocks"`
	Out    conv2   `weight:"out"`
	note   string
}

func TestBinderBindsNestedPartsAndIndexedLists(t *testing.T) {
	be := cpu.New()
	src := mapSource{}
	shapes := map[string][]int{}
	add := func(name string, shape []int, stored []int, vals ...float32) {
		src[name] = &quant.Tensor{Name: name, DType: quant.F32, Shape: stored, Data: f32(vals...)}
		shapes[name] = shape
	}
	for _, p := range []string{"s.blocks.0.", "s.blocks.1."} {
		add(p+"norm.gamma", []int{2, 1, 1}, []int{2, 1, 1}, 1, 2)
		add(p+"conv.weight", []int{1, 2, 1, 1}, []int{1, 2, 1, 1, 1}, 3, 4) // a one-frame Conv3d kernel
		add(p+"conv.bias", []int{1}, []int{1}, 5)
	}
	add("s.blocks.1.shortcut.weight", []int{1, 2, 1, 1}, []int{1, 2, 1, 1}, 6, 7)
	add("s.blocks.1.shortcut.bias", []int{1}, []int{1}, 8)
	add("s.out.weight", []int{1, 1, 1, 1}, []int{1, 1, 1, 1}, 9)
	add("s.out.bias", []int{1}, []int{1}, 10)

	b := &ml.Binder{Src: src, B: be, Network: "test", Shape: ml.ShapeMap(shapes), UnitDimsView: true}
	s := stack{Blocks: make([]block, 2), note: "kept"}
	s.Blocks[1].Shortcut = &conv2{}
	if err := b.Bind(&s, "s."); err != nil {
		t.Fatal(err)
	}
	if s.note != "kept" || s.Blocks[0].Shortcut != nil || s.Blocks[1].Skipped != nil {
		t.Error("Bind touched untagged state or filled a part left out")
	}
	for i, blk := range s.Blocks {
		if w := blk.Conv.W; len(w.Shape) != 4 || w.Name != fmt.Sprintf("s.blocks.%d.conv.weight", i) || &w.Data[0] != &src[w.Name].Data[0] {
			t.Errorf("block %d's conv weight is %v %v, want the stored payload viewed as [1 2 1 1]", i, w.Name, w.Shape)
		}
	}
	if s.Blocks[1].Shortcut.W != src["s.blocks.1.shortcut.weight"] {
		t.Error("a weight of exactly the config's shape is not the source's tensor, in place")
	}
	for what, v := range map[string]ml.Tensor{"blocks.1.norm.gamma": s.Blocks[1].Norm, "blocks.1.shortcut.bias": s.Blocks[1].Shortcut.Bias, "out.bias": s.Out.Bias} {
		got, err := be.Download(v)
		want := map[string]float32{"blocks.1.norm.gamma": 1, "blocks.1.shortcut.bias": 8, "out.bias": 10}[what]
		if err != nil || got[0] != want {
			t.Errorf("%s: %v (%v), want first value %v", what, got, err, want)
		}
	}

	b.UnitDimsView = false
	if err := b.Bind(&s, "s."); err == nil || !strings.Contains(err.Error(), "s.blocks.0.conv.weight has shape [1 2 1 1 1]") {
		t.Errorf("a 5-D kernel without UnitDimsView: %v", err)
	}
	b.UnitDimsView = true
	shapes["s.out.weight"] = []int{1, 1, 3, 1}
	if err := b.Bind(&s, "s."); err == nil || !strings.Contains(err.Error(), "s.out.weight") {
		t.Errorf("a kernel that is not the config's with unit dimensions added: %v", err)
	}
	s.Blocks = make([]block, 3)
	if err := b.Bind(&s, "s."); err == nil || !strings.Contains(err.Error(), "s.blocks.2.norm.gamma") {
		t.Errorf("a list longer than the file's: %v", err)
	}
	var bad struct {
		N int `weight:"n"`
	}
	if err := b.Bind(&bad, "s."); err == nil || !strings.Contains(err.Error(), "field N") {
		t.Errorf("an int field with a weight tag: %v", err)
	}
}
