package metal

import (
	"context"
	"fmt"
	"strings"
	"time"

	"easel/kernels/device"
)

// Kernel variants and their registry. A network's program declares, per op class (a GEMM, the
// attention), the ways it can run that class: the baseline kernels first, then variants that
// give the same results (proven on the emulator) by other means, which may be faster on one Mac
// and slower on another. The autotuner (autotune.go) times the variants that fit the device and
// pass their check, on the model's real shapes, and keeps the fastest per class.

// Variant is one way to run an op class.
type Variant struct {
	// Class is the op class, e.g. "gemm" or "attn": EASEL_METAL_VARIANT_<CLASS> forces a variant.
	Class string
	// Name is the variant's name within its class ("base" for the baseline).
	Name string
	// About is one line for diagnostics.
	About string
	// TensorOps marks a variant that needs Metal 4's tensor API (Apple10-family GPU, macOS 26):
	// it is skipped, never compiled, on a device without it.
	TensorOps bool
	// Prepare compiles the variant's pipelines on the device and checks them against the
	// variant's needs (threads per threadgroup, threadgroup memory); an error skips the variant
	// with the error as its note. Nil: nothing to prepare.
	Prepare func(dev device.Device) error
	// Check runs the variant against the baseline on a small slice; an error skips it. Nil: the
	// variant is the baseline or was proven elsewhere (the self-test).
	Check func(ctx context.Context, dev device.Device) error
	// Time runs the variant on the model's real shapes and returns the device time of one run.
	Time func(ctx context.Context, dev device.Device) (time.Duration, error)
}

// Registry is a program's declared variants, in declaration order (the baseline of each class
// first).
type Registry struct {
	variants []Variant
}

// Declare adds v; the first variant declared for a class is its baseline.
func (r *Registry) Declare(v Variant) error {
	if v.Class == "" || v.Name == "" {
		return fmt.Errorf("metal: a variant needs a class and a name (got %q/%q)", v.Class, v.Name)
	}
	for _, w := range r.variants {
		if w.Class == v.Class && w.Name == v.Name {
			return fmt.Errorf("metal: variant %s/%s declared twice", v.Class, v.Name)
		}
	}
	r.variants = append(r.variants, v)
	return nil
}

// Classes lists the op classes in declaration order.
func (r *Registry) Classes() []string {
	var cs []string
	for _, v := range r.variants {
		if !contains(cs, v.Class) {
			cs = append(cs, v.Class)
		}
	}
	return cs
}

// Of lists the variants of class, baseline first.
func (r *Registry) Of(class string) []Variant {
	var vs []Variant
	for _, v := range r.variants {
		if v.Class == class {
			vs = append(vs, v)
		}
	}
	return vs
}

// ForceEnv is the environment variable that forces class's variant: EASEL_METAL_VARIANT_GEMM.
func ForceEnv(class string) string {
	return "EASEL_METAL_VARIANT_" + strings.ToUpper(strings.NewReplacer("-", "_", " ", "_").Replace(class))
}

// TensorOpsDevice is implemented by devices that can say whether they have Metal 4's tensor API
// (the darwin device: an Apple10-family GPU on macOS 26 or later; the emulator: always, it
// emulates the subset the kernels use). A device that does not implement it has none.
type TensorOpsDevice interface {
	SupportsTensorOps() bool
}

// HasTensorOps reports whether dev has Metal 4's tensor API.
func HasTensorOps(dev device.Device) bool {
	t, ok := dev.(TensorOpsDevice)
	return ok && t.SupportsTensorOps()
}
