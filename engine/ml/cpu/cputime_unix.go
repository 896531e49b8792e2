//go:build unix

package cpu

import (
	"syscall"
	"time"
)

// ProcessCPUTime is the user + system CPU time this process has used so far, BLAS threads
// included. Benchmarks on shared machines report it beside wall time: it moves far less with
// other jobs' load.
func ProcessCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
