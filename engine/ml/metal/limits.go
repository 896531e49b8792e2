package metal

import "easel/kernels/device"

// The interface in kernels/device has no memory limits (and, in its committed form, no buffers
// over host memory). A device that has them implements these extensions; one that does not is
// treated as unlimited, and the weight arena is copied into ordinary buffers.

// Limits reports a device's memory limits (MTLDevice maxBufferLength and
// recommendedMaxWorkingSetSize).
type Limits interface {
	// MaxBufferLength is the largest buffer the device can create, in bytes.
	MaxBufferLength() int64
	// RecommendedMaxWorkingSetSize is how much memory the device can use without hurting
	// performance, in bytes.
	RecommendedMaxWorkingSetSize() int64
}

// NoCopier wraps host memory as a device buffer without copying it (MTLDevice
// newBufferWithBytesNoCopy). mem must start and end on page boundaries and stay mapped and
// unchanged while the buffer lives. (The same method as the one kernels/device is gaining.)
type NoCopier interface {
	NewBufferNoCopy(mem []byte) (device.Buffer, error)
}

// pageSize is the alignment of no-copy buffers: Apple silicon's 16 KiB pages.
const pageSize = 16 << 10

// unlimited stands for a device that reports no limits.
const unlimited = int64(1) << 62

// limitsOf returns the device's buffer and working-set limits, or unlimited ones.
func limitsOf(dev device.Device) (maxBuffer, workingSet int64) {
	if l, ok := dev.(Limits); ok {
		return l.MaxBufferLength(), l.RecommendedMaxWorkingSetSize()
	}
	return unlimited, unlimited
}
