package pipeline

import (
	"encoding/binary"
	"syscall"
)

// peakRSS is getrusage's ru_maxrss, which macOS reports in bytes.
func peakRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return int64(ru.Maxrss)
}

// physicalMemory is sysctl hw.memsize (a little-endian uint64; syscall.Sysctl returns its bytes
// as a string with the trailing zero byte trimmed).
func physicalMemory() int64 {
	s, err := syscall.Sysctl("hw.memsize")
	if err != nil {
		return 0
	}
	var b [8]byte
	copy(b[:], s)
	return int64(binary.LittleEndian.Uint64(b[:]))
}
