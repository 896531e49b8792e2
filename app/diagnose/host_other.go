//go:build !darwin && !linux

package diagnose

import "runtime"

// hostInfo says only what the Go runtime knows.
func hostInfo() Host {
	return Host{OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU()}
}
