//go:build !unix

package cpu

import "time"

// ProcessCPUTime is not measured on this platform; it returns 0.
func ProcessCPUTime() time.Duration { return 0 }
