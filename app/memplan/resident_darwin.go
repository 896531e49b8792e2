package memplan

import "syscall"

// Resident is not read on macOS yet (task_info's phys_footprint needs cgo): 0, 0. PeakResident
// gives the high-water mark.
func Resident() (total, file int64) { return 0, 0 }

// PeakResident is getrusage's high-water mark of the resident set (ru_maxrss, bytes on macOS).
func PeakResident() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return int64(ru.Maxrss)
}
