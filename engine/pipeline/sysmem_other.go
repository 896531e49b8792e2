//go:build !linux && !darwin

package pipeline

// peakRSS is unknown on this platform.
func peakRSS() int64 { return 0 }

// physicalMemory is unknown on this platform.
func physicalMemory() int64 { return 0 }
