package cpu

import (
	"fmt"
	"time"

	"easel/engine/ml"
)

// Tensor is a float32 row-major host tensor. Views made by Slice share their parent's storage.
type Tensor struct {
	data  []float32
	shape []int
}

// Shape is the tensor's dimensions.
func (t *Tensor) Shape() []int { return t.shape }

// rows and cols view the tensor as 2-D: every dimension but the last against the last.
func (t *Tensor) cols() int {
	if len(t.shape) == 0 {
		return 1
	}
	return t.shape[len(t.shape)-1]
}

func (t *Tensor) rows() int {
	if c := t.cols(); c > 0 {
		return len(t.data) / c
	}
	return 0
}

// Backend is the CPU implementation of ml.Backend. The zero value is not ready: use New.
type Backend struct {
	timings ml.Timings
	// tileRows is how many weight rows a linear layer dequantizes at a time.
	tileRows int
}

var _ ml.Backend = (*Backend)(nil)

// DefaultTileRows is the weight-tile height of linear layers: the scratch holds this many
// dequantized rows (256 × 12288 floats = 12.6 MB at the DiT's widest).
const DefaultTileRows = 256

// New makes a CPU backend.
func New() *Backend { return &Backend{tileRows: DefaultTileRows} }

// Name is "cpu/" and the GEMM in use (openblas, accelerate or go).
func (b *Backend) Name() string { return "cpu/" + blasName }

// Timings is the time spent per op class.
func (b *Backend) Timings() *ml.Timings { return &b.timings }

// track starts timing an op; call the result when the op is done.
func (b *Backend) track(c ml.Class, flops float64) func() {
	start := time.Now()
	return func() { b.timings.Add(c, time.Since(start), flops) }
}

func count(shape []int) (int, error) {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("negative dimension in shape %v", shape)
		}
		n *= d
	}
	return n, nil
}

// New allocates a zeroed tensor.
func (b *Backend) New(shape ...int) (ml.Tensor, error) {
	n, err := count(shape)
	if err != nil {
		return nil, fmt.Errorf("cpu.New: %v", err)
	}
	return &Tensor{data: make([]float32, n), shape: append([]int(nil), shape...)}, nil
}

// Upload copies data into a new tensor.
func (b *Backend) Upload(data []float32, shape ...int) (ml.Tensor, error) {
	n, err := count(shape)
	if err != nil {
		return nil, fmt.Errorf("cpu.Upload: %v", err)
	}
	if n != len(data) {
		return nil, fmt.Errorf("cpu.Upload: %d values for shape %v (%d elements)", len(data), shape, n)
	}
	defer b.track(ml.ClassCopy, 0)()
	return &Tensor{data: append([]float32(nil), data...), shape: append([]int(nil), shape...)}, nil
}

// Download copies the tensor's elements.
func (b *Backend) Download(t ml.Tensor) ([]float32, error) {
	ct, err := host("Download", "tensor", t)
	if err != nil {
		return nil, err
	}
	defer b.track(ml.ClassCopy, 0)()
	return append([]float32(nil), ct.data...), nil
}

// Slice is a view of consecutive elements.
func (b *Backend) Slice(t ml.Tensor, offset int, shape ...int) (ml.Tensor, error) {
	ct, err := host("Slice", "tensor", t)
	if err != nil {
		return nil, err
	}
	n, err := count(shape)
	if err != nil {
		return nil, fmt.Errorf("cpu.Slice: %v", err)
	}
	if offset < 0 || offset+n > len(ct.data) {
		return nil, fmt.Errorf("cpu.Slice: elements [%d, %d) are outside a tensor of %d elements (shape %v)", offset, offset+n, len(ct.data), ct.shape)
	}
	return &Tensor{data: ct.data[offset : offset+n : offset+n], shape: append([]int(nil), shape...)}, nil
}

// Free drops the reference; the garbage collector reclaims the memory.
func (b *Backend) Free(t ml.Tensor) {
	if ct, ok := t.(*Tensor); ok && ct != nil {
		ct.data = nil
	}
}

// host unwraps a tensor of this backend; what names the argument for the error.
func host(op, what string, t ml.Tensor) (*Tensor, error) {
	if t == nil {
		return nil, fmt.Errorf("cpu.%s: %s is nil", op, what)
	}
	ct, ok := t.(*Tensor)
	if !ok || ct == nil {
		return nil, fmt.Errorf("cpu.%s: %s is a %T, not a CPU tensor (tensors cannot move between backends)", op, what, t)
	}
	if ct.data == nil && len(ct.shape) > 0 {
		if n, _ := count(ct.shape); n > 0 {
			return nil, fmt.Errorf("cpu.%s: %s was freed", op, what)
		}
	}
	return ct, nil
}

// optional unwraps a tensor that may be nil.
func optional(op, what string, t ml.Tensor) (*Tensor, error) {
	if t == nil {
		return nil, nil
	}
	if ct, ok := t.(*Tensor); ok && ct == nil {
		return nil, nil
	}
	return host(op, what, t)
}

// sameSize checks that two tensors hold the same number of elements.
func sameSize(op string, a, b *Tensor, an, bn string) error {
	if len(a.data) != len(b.data) {
		return fmt.Errorf("cpu.%s: %s has shape %v but %s has shape %v (element counts %d and %d differ)", op, an, a.shape, bn, b.shape, len(a.data), len(b.data))
	}
	return nil
}

// oneRow checks that v is one row of width cols.
func oneRow(op, what string, v *Tensor, cols int) error {
	if len(v.data) != cols {
		return fmt.Errorf("cpu.%s: %s has shape %v; it must be one row of %d values", op, what, v.shape, cols)
	}
	return nil
}
