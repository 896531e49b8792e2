package metal

import "easel/kernels/device"

// PageSize is the alignment of the weight arena's no-copy chunks: Apple silicon's 16 KiB pages
// (a multiple of every host page size the emulator runs on).
const PageSize = 16 << 10

// Unlimited stands for a limit the device does not report.
const Unlimited = int64(1) << 62

// DeviceLimits returns the device's largest buffer and recommended working set in bytes; a limit
// the device reports as zero or less is taken as none (Unlimited).
func DeviceLimits(dev device.Device) (maxBuffer, workingSet int64) {
	l := dev.Limits()
	maxBuffer, workingSet = l.MaxBufferLength, l.RecommendedMaxWorkingSetSize
	if maxBuffer <= 0 {
		maxBuffer = Unlimited
	}
	if workingSet <= 0 {
		workingSet = Unlimited
	}
	return maxBuffer, workingSet
}
