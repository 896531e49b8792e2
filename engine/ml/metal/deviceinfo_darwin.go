//go:build darwin

package metal

import (
	"strconv"

	"github.com/progrium/darwinkit/macos/metal"

	"easel/engine/objcsafe"
)

// GPUFamily is the newest Apple GPU family the device supports (MTLDevice supportsFamily:), e.g.
// "apple9" for M3/M4, or "" when it reports none of apple1…apple10.
func (d *darwinDevice) GPUFamily() string {
	for f := 1010; f >= 1001; f-- {
		if objcsafe.Bool(d.dev, "supportsFamily:", metal.GPUFamily(f)) {
			return "apple" + strconv.Itoa(f-1000)
		}
	}
	return ""
}

// CurrentAllocatedBytes is MTLDevice.currentAllocatedSize: the device memory the process holds.
func (d *darwinDevice) CurrentAllocatedBytes() int64 { return int64(d.dev.CurrentAllocatedSize()) }
