package memplan

import (
	"encoding/binary"
	"syscall"
)

// hasMetal is true: the Mac build has the Metal backend.
const hasMetal = true

// PhysicalMemory is sysctl hw.memsize (0 when unknown).
func PhysicalMemory() int64 {
	s, err := syscall.Sysctl("hw.memsize")
	if err != nil {
		return 0
	}
	var b [8]byte
	copy(b[:], s)
	return int64(binary.LittleEndian.Uint64(b[:]))
}
