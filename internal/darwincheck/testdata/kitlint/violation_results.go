package p

import (
	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/objc"
)

// Underlying reads the NSArray of underlying errors through darwinkit's to_c_array, directly and
// through the wrapper.
func Underlying(e foundation.Error) int {
	n := len(e.UnderlyingErrors())                                          // want: slice-result UnderlyingErrors
	raw := objc.Call[[]objc.Object](e, objc.Sel("underlyingErrors"))        // want: slice-result "underlyingErrors"
	sets := objc.Call[[]metal.CounterSetObject](e, objc.Sel("counterSets")) // want: slice-result "counterSets"
	return n + len(raw) + len(sets)
}

// Family reads BOOL results into 1-byte Go bools through libffi.
func Family(dev metal.DeviceObject) bool {
	a := dev.SupportsFamily(metal.GPUFamilyApple7)                                // want: narrow-result SupportsFamily
	b := objc.Call[bool](dev, objc.Sel("supportsFamily:"), metal.GPUFamilyApple7) // want: narrow-result "supportsFamily:"
	c := objc.Call[int32](dev, objc.Sel("registryID")) != 0                       // want: narrow-result "registryID"
	return a && b && c
}
