package torchfile

import (
	"errors"
	"fmt"
)

// reduce is REDUCE: fn(*args) for the allowed globals, each done here in Go.
func reduce(fn any, args tuple) (any, error) {
	g, ok := fn.(global)
	if !ok {
		return nil, fmt.Errorf("the pickle calls a %s", kind(fn))
	}
	switch g {
	case global{"collections", "OrderedDict"}:
		if len(args) > 0 {
			return nil, errors.New("OrderedDict is called with arguments; a state dict's is empty")
		}
		return &dict{}, nil
	case global{"torch._utils", "_rebuild_tensor_v2"}, global{"torch._utils", "_rebuild_tensor"}:
		if len(args) < 4 {
			return nil, fmt.Errorf("%s gets %d arguments, want at least 4", g, len(args))
		}
		return rebuildTensor(args[0], args[1], args[2], args[3])
	case global{"torch._utils", "_rebuild_parameter"}:
		if len(args) < 1 {
			return nil, errors.New("_rebuild_parameter gets no tensor")
		}
		if t, ok := args[0].(*tensorRef); ok {
			return t, nil
		}
		return nil, fmt.Errorf("_rebuild_parameter gets a %s, not a tensor", kind(args[0]))
	}
	// A storage type is a name inside a persistent id, never a callable.
	return nil, fmt.Errorf("the pickle calls %s, which a file of weights never calls", g)
}

func rebuildTensor(storage, offset, size, stride any) (*tensorRef, error) {
	st, ok := storage.(*storageRef)
	if !ok {
		return nil, fmt.Errorf("a tensor is rebuilt from a %s, not a storage", kind(storage))
	}
	off, ok := offset.(int64)
	if !ok || off < 0 {
		return nil, fmt.Errorf("a tensor's storage offset is %v", offset)
	}
	shape, err := ints(size, "size")
	if err != nil {
		return nil, err
	}
	strides, err := ints(stride, "stride")
	if err != nil {
		return nil, err
	}
	if len(shape) != len(strides) {
		return nil, fmt.Errorf("a tensor has %d sizes and %d strides", len(shape), len(strides))
	}
	last := off
	for i := range shape {
		if shape[i] < 0 || strides[i] < 0 {
			return nil, fmt.Errorf("a tensor has size %v and stride %v", shape, strides)
		}
		if shape[i] == 0 {
			last = -1
			break
		}
		last += (shape[i] - 1) * strides[i]
	}
	if last >= st.numel {
		return nil, fmt.Errorf("a tensor of size %v, stride %v at offset %d reads past its storage of %d elements", shape, strides, off, st.numel)
	}
	return &tensorRef{st: st, offset: off, shape: shape, stride: strides}, nil
}

func ints(v any, what string) ([]int64, error) {
	t, ok := v.(tuple)
	if !ok {
		return nil, fmt.Errorf("a tensor's %s is a %s, not a tuple", what, kind(v))
	}
	out := make([]int64, len(t))
	for i, e := range t {
		n, ok := e.(int64)
		if !ok {
			return nil, fmt.Errorf("a tensor's %s holds a %s", what, kind(e))
		}
		out[i] = n
	}
	return out, nil
}

// persistent is BINPERSID's ("storage", torch.<T>Storage, key, location, numel).
func persistent(pid any) (*storageRef, error) {
	t, ok := pid.(tuple)
	if !ok || len(t) < 5 {
		return nil, fmt.Errorf("a persistent id is a %s, not PyTorch's (\"storage\", type, key, location, size)", kind(pid))
	}
	if s, _ := t[0].(string); s != "storage" {
		return nil, fmt.Errorf("a persistent id of kind %v; PyTorch's are \"storage\"", t[0])
	}
	g, ok := t[1].(global)
	if !ok || g.module != "torch" {
		return nil, fmt.Errorf("a storage of type %v", t[1])
	}
	typ, ok := storageTypes[g.name]
	if !ok {
		return nil, fmt.Errorf("a storage of type %s, which this reader does not know", g)
	}
	key, ok := t[2].(string)
	if !ok {
		return nil, fmt.Errorf("a storage key is a %s", kind(t[2]))
	}
	numel, ok := t[4].(int64)
	if !ok || numel < 0 {
		return nil, fmt.Errorf("a storage's size is %v", t[4])
	}
	return &storageRef{key: key, dtype: typ.dtype, size: typ.size, numel: numel}, nil
}
