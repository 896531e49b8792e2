package torchfile

import "fmt"

// global is a name a pickle's GLOBAL or STACK_GLOBAL opcode pushed: module and attribute. It is
// data only; what REDUCE may do with it is decided by reduce below, for allowed names only.
type global struct{ module, name string }

func (g global) String() string { return g.module + "." + g.name }

// allowed are the globals a state dict needs: the tensor rebuilders, the ordered dict, and the
// storage types that name a tensor's element type inside a persistent id.
var allowed = map[global]bool{
	{"torch._utils", "_rebuild_tensor_v2"}: true,
	{"torch._utils", "_rebuild_tensor"}:    true,
	{"torch._utils", "_rebuild_parameter"}: true,
	{"collections", "OrderedDict"}:         true,
}

// storageTypes maps torch's storage classes to the element type (safetensors' names) and size.
var storageTypes = map[string]struct {
	dtype string
	size  int
}{
	"FloatStorage":    {"F32", 4},
	"HalfStorage":     {"F16", 2},
	"BFloat16Storage": {"BF16", 2},
	"DoubleStorage":   {"F64", 8},
	"LongStorage":     {"I64", 8},
	"IntStorage":      {"I32", 4},
	"ShortStorage":    {"I16", 2},
	"CharStorage":     {"I8", 1},
	"ByteStorage":     {"U8", 1},
	"BoolStorage":     {"BOOL", 1},
}

// lookup is what a GLOBAL opcode may push: an allowed global or a storage type; anything else is
// refused here, before any argument of it is read.
func lookup(module, name string) (global, error) {
	g := global{module, name}
	if allowed[g] {
		return g, nil
	}
	if module == "torch" {
		if _, ok := storageTypes[name]; ok {
			return g, nil
		}
	}
	return global{}, &RefusedError{Global: g.String()}
}

// RefusedError is a checkpoint whose pickle names a global outside the allow-list: code that
// torch.load would have run. Nothing was called.
type RefusedError struct{ Global string }

func (e *RefusedError) Error() string {
	return fmt.Sprintf("the file asks to run %s, which a file of weights never needs; it was refused and nothing in it ran (a checkpoint must hold only tensors: re-save it with torch.save(model.state_dict()) or use a .safetensors copy)", e.Global)
}
