//go:build darwin

package objcsafe

import (
	"github.com/progrium/darwinkit/objc"
)

// Array is the elements of the NSArray arr points at (unretained: valid while the array is),
// nil for a nil or empty array. It sends count first and objectAtIndex: for each index below it.
func Array(arr objc.Object) []objc.Object {
	if arr.IsNil() {
		return nil
	}
	n := objc.Call[uint64](arr, objc.Sel("count"))
	if n == 0 {
		return nil
	}
	out := make([]objc.Object, 0, n)
	for i := range n {
		out = append(out, objc.Call[objc.Object](arr, objc.Sel("objectAtIndex:"), i))
	}
	return out
}

// ArrayResult sends sel (a message whose result is an NSArray) to o and reads the array with
// Array. Call it inside an autorelease pool: the array is usually autoreleased.
func ArrayResult(o objc.Handle, sel string, args ...any) []objc.Object {
	return Array(objc.Call[objc.Object](o, objc.Sel(sel), args...))
}

// Strings is Array of an NSArray of NSStrings, each as a Go string.
func Strings(arr objc.Object) []string {
	items := Array(arr)
	if items == nil {
		return nil
	}
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = objc.ToGoString(s.Ptr())
	}
	return out
}

// Bool sends sel (a message whose result is a BOOL) to o and reads the result full width.
func Bool(o objc.Handle, sel string, args ...any) bool {
	return objc.Call[uint64](o, objc.Sel(sel), args...)&0xff != 0
}

// WithPool runs f inside an autorelease pool. A panic in f is recovered inside the pool, so the
// pool pops, and raised again after it with the same value.
func WithPool(f func()) {
	var (
		value    any
		panicked bool
	)
	objc.WithAutoreleasePool(func() { value, panicked = capture(f) })
	if panicked {
		panic(value)
	}
}
