//go:build linux

package diagnose

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"easel/engine/procmem"
)

// hostInfo reads /proc and uname (Linux); fields it cannot read stay empty.
func hostInfo() Host {
	h := Host{OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU()}
	var u syscall.Utsname
	if syscall.Uname(&u) == nil {
		h.OSBuild = utsString(u.Release[:])
	}
	h.OSVersion = strings.Trim(field("/etc/os-release", "PRETTY_NAME="), `"`)
	h.Chip = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(field("/proc/cpuinfo", "model name")), ":"))
	h.PhysicalMemory = kB(field("/proc/meminfo", "MemTotal:"))
	fp := procmem.Read()
	h.Footprint, h.PeakFootprint = fp.Now, fp.Peak
	return h
}

func utsString[T int8 | uint8](b []T) string {
	var s strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		s.WriteByte(byte(c))
	}
	return s.String()
}

// field is the rest of the first line of file starting with prefix.
func field(file, prefix string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, prefix) {
			return strings.TrimSpace(strings.TrimPrefix(line, prefix))
		}
	}
	return ""
}

// kB parses "123 kB" as bytes (0 when it cannot).
func kB(s string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(s, "kB")), 10, 64)
	if err != nil {
		return 0
	}
	return n << 10
}
