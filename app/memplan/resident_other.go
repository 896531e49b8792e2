//go:build !linux && !darwin

package memplan

// Resident is unknown on this system: 0, 0.
func Resident() (total, file int64) { return 0, 0 }

// PeakResident is unknown on this system: 0.
func PeakResident() int64 { return 0 }
