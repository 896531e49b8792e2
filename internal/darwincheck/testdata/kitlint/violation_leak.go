package p

import (
	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/objc"
)

// Kernel takes a +1 MTLFunction (newFunctionWithName:) and never releases it.
func Kernel(lib metal.LibraryObject) bool {
	fn := lib.NewFunctionWithName("k") // want: leak NewFunctionWithName
	return fn.IsNil()
}

// Discard drops a +1 queue on the floor.
func Discard(dev metal.DeviceObject) {
	dev.NewCommandQueue() // want: leak NewCommandQueue
}

// Raw sends a new… selector itself and keeps the result nowhere.
func Raw(dev metal.DeviceObject) {
	q := objc.Call[metal.CommandQueueObject](dev, objc.Sel("newCommandQueue")) // want: leak "newCommandQueue"
	_ = q.Label()
}
