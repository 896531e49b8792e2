package memplan

import "syscall"

// hasMetal is false: Linux runs on the CPU backend.
const hasMetal = false

// PhysicalMemory is the machine's RAM from sysinfo(2) (0 when unknown).
func PhysicalMemory() int64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}
