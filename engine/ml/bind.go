package ml

import (
	"fmt"
	"reflect"
	"strconv"

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
//
// A network's parts nest the same way. A tagged struct field is bound under Prefix + tag + ".":
//
//	Conv1 conv `weight:"conv1"` // conv1.weight, conv1.bias
//
// a tagged pointer to a struct likewise when it is not nil (nil is a part the config leaves out,
// such as a shortcut only some blocks have: the caller allocates the parts its config calls for),
// and a tagged slice of structs element by element, element i under Prefix + tag + ".i." (the
// caller sizes the slice from its config):
//
//	Resnets []resBlock `weight:"resnets"` // resnets.0.…, resnets.1.…
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
	// UnitDimsView accepts a weight whose shape is the config's with dimensions of size 1 added
	// (a one-frame Conv3d kernel [out, in, 1, k, k] where the config calls for the Conv2d
	// [out, in, k, k]; the layout in memory is the same) and binds it viewed with the config's
	// shape, its payload still where Src keeps it.
	UnitDimsView bool
	// RowVectors uploads vectors as [1, n] instead of [n].
	RowVectors bool
}

// WeightTag is the struct tag Binder reads a field's tensor name from.
const WeightTag = "weight"

var (
	quantTensorType = reflect.TypeOf((*quant.Tensor)(nil))
	tensorType      = reflect.TypeOf((*Tensor)(nil)).Elem()
)

// Bind fills the tagged fields of the struct dst points to, each from prefix + its tag, and the
// tagged parts nested in it.
func (b *Binder) Bind(dst any, prefix string) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("%s: Bind needs a pointer to a struct, not %T", b.Network, dst)
	}
	return b.bindStruct(v.Elem(), prefix)
}

func (b *Binder) bindStruct(v reflect.Value, prefix string) error {
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		tag := f.Tag.Get(WeightTag)
		if tag == "" {
			continue
		}
		if err := b.bindField(v.Field(i), f, prefix+tag); err != nil {
			return err
		}
	}
	return nil
}

func (b *Binder) bindField(field reflect.Value, f reflect.StructField, name string) error {
	switch t := f.Type; {
	case t == quantTensorType:
		w, err := b.Matrix(name)
		if err != nil {
			return err
		}
		field.Set(reflect.ValueOf(w))
	case t == tensorType:
		w, err := b.Vector(name)
		if err != nil {
			return err
		}
		field.Set(reflect.ValueOf(&w).Elem())
	case t.Kind() == reflect.Struct:
		return b.bindStruct(field, name+".")
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct:
		if field.IsNil() {
			return nil // a part this network's config leaves out
		}
		return b.bindStruct(field.Elem(), name+".")
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		for j := 0; j < field.Len(); j++ {
			if err := b.bindStruct(field.Index(j), name+"."+strconv.Itoa(j)+"."); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("%s: field %s has type %v, which Bind cannot fill (use *quant.Tensor, ml.Tensor, or a struct, pointer to a struct or slice of structs with tagged fields)", b.Network, f.Name, f.Type)
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
	want, ok := b.shape(name)
	if !ok || b.matrixFits(t, want) {
		return t, nil
	}
	if b.UnitDimsView && withUnitDims(t.Shape, want) {
		view := *t
		view.Shape = append([]int(nil), want...)
		return &view, nil
	}
	return nil, fmt.Errorf("%s: %s has shape %v but the config calls for %v: the weights and their config do not belong together; convert the model again", b.Network, name, t.Shape, want)
}

// withUnitDims reports whether shape is want with one or more dimensions of size 1 added.
func withUnitDims(shape, want []int) bool {
	if len(shape) <= len(want) {
		return false
	}
	j := 0
	for _, d := range shape {
		switch {
		case j < len(want) && d == want[j]:
			j++
		case d != 1:
			return false
		}
	}
	return j == len(want)
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
