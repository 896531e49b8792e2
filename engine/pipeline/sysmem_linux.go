package pipeline

import "syscall"

// peakRSS is getrusage's ru_maxrss, which Linux reports in KiB.
func peakRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return int64(ru.Maxrss) * 1024
}

// physicalMemory is the machine's RAM from sysinfo(2).
func physicalMemory() int64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}
