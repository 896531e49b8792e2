package metalops

import (
	"fmt"

	"easel/engine/ml"
	"easel/kernels/device"
)

// storage is one device buffer of float32 activations.
type storage struct {
	buf   device.Buffer
	bytes int
	freed bool
}

// tensor is a float32 view of count(shape) elements starting at element off of its storage.
type tensor struct {
	st    *storage
	off   int
	shape []int
	view  bool // a Slice: freeing it does nothing
}

func (t *tensor) Shape() []int { return t.shape }

// n is the element count.
func (t *tensor) n() int { return count(t.shape) }

func count(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// bind sets t at index of enc.
func (t *tensor) bind(enc device.Encoder, index int) { enc.SetBuffer(t.st.buf, 4*t.off, index) }

// own returns x as this backend's live tensor, or an error naming op.
func (b *Backend) own(op string, x ml.Tensor) (*tensor, error) {
	t, ok := x.(*tensor)
	switch {
	case x == nil || (ok && t == nil):
		return nil, fmt.Errorf("metalops %s: a tensor is nil", op)
	case !ok:
		return nil, fmt.Errorf("metalops %s: a %T is not a tensor of this backend", op, x)
	case t.st.freed:
		return nil, fmt.Errorf("metalops %s: a tensor was used after Free", op)
	}
	return t, nil
}

// chw returns t's shape as [C, H, W].
func chw(op string, t *tensor) (c, h, w int, err error) {
	if len(t.shape) != 3 {
		return 0, 0, 0, fmt.Errorf("metalops %s: shape %v, want [C, H, W]", op, t.shape)
	}
	return t.shape[0], t.shape[1], t.shape[2], nil
}

// perChannel takes the operands of an op on x [C, H, W] with one value per channel (row, C values)
// into dst of x's size: the three as this backend's tensors, C and the pixels per channel.
func (b *Backend) perChannel(op, rowName string, dst, x, row ml.Tensor) (d, a, r *tensor, c, pixels int, err error) {
	if d, err = b.own(op, dst); err != nil {
		return
	}
	if a, err = b.own(op, x); err != nil {
		return
	}
	if r, err = b.own(op, row); err != nil {
		return
	}
	c, h, w, err := chw(op, a)
	if err != nil {
		return
	}
	if d.n() != a.n() || r.n() != c {
		err = fmt.Errorf("metalops %s: x %v, %s %v into %v", op, a.shape, rowName, r.shape, d.shape)
	}
	return d, a, r, c, h * w, err
}
