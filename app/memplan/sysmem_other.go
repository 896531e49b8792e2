//go:build !linux && !darwin

package memplan

// hasMetal is false off the Mac.
const hasMetal = false

// PhysicalMemory is unknown on this system (0: every plan fits).
func PhysicalMemory() int64 { return 0 }
