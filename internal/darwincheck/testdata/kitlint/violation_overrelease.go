package p

import (
	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/objc"
)

// Describe releases a descriptor darwinkit's constructor already autoreleased (new + Autorelease).
func Describe(dev metal.DeviceObject) {
	objc.WithAutoreleasePool(func() {
		desc := metal.NewCounterSampleBufferDescriptor()
		desc.SetSampleCount(8)
		desc.Release() // want: over-release desc
	})
}
