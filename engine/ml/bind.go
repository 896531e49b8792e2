package ml

import (
	"fmt"
	"reflect"

	"easel/engine/quant"
)

// Binder binds a network's weights to the fields of its structs by tag, the one way Easel's
// networks bind weights (the way ollama's Go models do). A field tagged
//
//	ToQ *quant.Tensor `weight:"attn.to_q.weight"`
//
// holds the tensor Prefix + "attn.to_q.weight" of Src. *quant.Tensor fields keep the payload where
// Src keeps it (in place in the file mapping, in any codec the backends decode); ml.Tensor fields
// are small vectors (norm weights, biases), decoded to float32 and uploaded to B as one row.
// Fields without the tag are left alone, so a struct may carry other state.
type Binder struct {
	Src quant.Source
	B   Backend
	// Network names the weights' owner in errors ("qi21", "text encoder", "vae").
	Network string
	// Shape is the shape the config calls for, by full tensor name; ok false skips the check.
	// A matrix must have exactly that shape (or, with MatrixView, a first dimension and a product
	// of the others that match a 2-D shape); a vector must have that many elements.
	Shape func(name string) (shape []int, ok bool)
	// MatrixView accepts a weight of more than two dimensions as the 2-D matrix [rows, cols] its
	// first dimension and the product of the others make (a Conv3d patch embedding as a linear).
	MatrixView bool
	// RowVectors uploads vectors as [1, n] instead of [n].
	RowVectors bool
}

// WeightTag is the struct tag Binder reads a field's tensor name from.
const WeightTag = "weight"

var (
	quantTensorType = reflect.TypeOf((*quant.Tensor)(nil))
	tensorType      = reflect.TypeOf((*Tensor)(nil)).Elem()
)

// Bind fills the tagged fields of the struct dst points to, each from prefix + its tag.
func (b *Binder) Bind(dst any, prefix string) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("%s: Bind needs a pointer to a struct, not %T", b.Network, dst)
	}
	v = v.Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		tag := f.Tag.Get(WeightTag)
		if tag == "" {
			continue
		}
		name := prefix + tag
		switch f.Type {
		case quantTensorType:
			t, err := b.Matrix(name)
			if err != nil {
				return err
			}
			v.Field(i).Set(reflect.ValueOf(t))
		case tensorType:
			t, err := b.Vector(name)
			if err != nil {
				return err
			}
			v.Field(i).Set(reflect.ValueOf(&t).Elem())
		default:
			return fmt.Errorf("%s: field %s has type %v, which Bind cannot fill (use *quant.Tensor or ml.Tensor)", b.Network, f.Name, f.Type)
		}
	}
	return nil
}

// lookup finds a tensor that must exist.
func (b *Binder) lookup(name string) (*quant.Tensor, error) {
	t, err := b.Src.Tensor(name)
	if err != nil {
		return nil, fmt.Errorf("%s: loading %s: %v", b.Network, name, err)
	}
	if t == nil {
		return nil, fmt.Errorf("%s: the model has no tensor %s: it is not a complete Qwen-Image-2.1 file; convert the snapshot again", b.Network, name)
	}
	return t, nil
}

// Matrix is the weight name, in place, after its shape check.
func (b *Binder) Matrix(name string) (*quant.Tensor, error) {
	t, err := b.lookup(name)
	if err != nil {
		return nil, err
	}
	if want, ok := b.shape(name); ok && !b.matrixFits(t, want) {
		return nil, fmt.Errorf("%s: %s has shape %v but the config calls for %v: the weights and their config do not belong together; convert the model again", b.Network, name, t.Shape, want)
	}
	return t, nil
}

// Vector is the weight name decoded to float32 and uploaded as one row.
func (b *Binder) Vector(name string) (Tensor, error) {
	t, err := b.lookup(name)
	if err != nil {
		return nil, err
	}
	n := elementCount(t.Shape)
	if want, ok := b.shape(name); ok && n != elementCount(want) {
		return nil, fmt.Errorf("%s: %s has shape %v but the config calls for %v: the weights and their config do not belong together; convert the model again", b.Network, name, t.Shape, want)
	}
	shape := []int{n}
	if b.RowVectors {
		shape = []int{1, n}
	}
	vals, err := quant.Dequantize(&quant.Tensor{Name: t.Name, DType: t.DType, Shape: shape, Data: t.Data})
	if err != nil {
		return nil, fmt.Errorf("%s: decoding %s: %v", b.Network, name, err)
	}
	up, err := b.B.Upload(vals, shape...)
	if err != nil {
		return nil, fmt.Errorf("%s: uploading %s: %v", b.Network, name, err)
	}
	return up, nil
}

func (b *Binder) shape(name string) ([]int, bool) {
	if b.Shape == nil {
		return nil, false
	}
	return b.Shape(name)
}

func (b *Binder) matrixFits(t *quant.Tensor, want []int) bool {
	if reflect.DeepEqual(t.Shape, want) || len(t.Shape) == len(want) && len(want) == 0 {
		return true
	}
	return b.MatrixView && len(want) == 2 && t.Rows() == want[0] && t.Cols() == want[1]
}

func elementCount(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// ShapeMap is a Binder.Shape from a map of full tensor names.
func ShapeMap(m map[string][]int) func(string) ([]int, bool) {
	return func(name string) ([]int, bool) {
		s, ok := m[name]
		return s, ok
	}
}
