package metal

import "easel/kernels/device"

// pageSize is the alignment of the weight arena's no-copy chunks: Apple silicon's 16 KiB pages
// (a multiple of every host page size the emulator runs on).
const pageSize = 16 << 10

// unlimited stands for a limit the device does not report.
const unlimited = int64(1) << 62

// limitsOf returns the device's largest buffer and recommended working set; a limit reported as
// zero or less is taken as none.
func limitsOf(dev device.Device) (maxBuffer, workingSet int64) {
	l := dev.Limits()
	maxBuffer, workingSet = l.MaxBufferLength, l.RecommendedMaxWorkingSetSize
	if maxBuffer <= 0 {
		maxBuffer = unlimited
	}
	if workingSet <= 0 {
		workingSet = unlimited
	}
	return maxBuffer, workingSet
}
