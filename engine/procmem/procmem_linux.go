//go:build linux

package procmem

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

const (
	resetMethod   = "VmHWM, reset at each stage's start (/proc/self/clear_refs 5)"
	sampledMethod = "VmHWM when the stage set the process's peak, else the larger resident set of its start and end (clear_refs not permitted)"
)

// Read is VmRSS and VmHWM from /proc/self/status.
func Read() Sample {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return Sample{}
	}
	defer f.Close()
	var s Sample
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "VmRSS:"):
			s.Now = kB(strings.TrimPrefix(line, "VmRSS:"))
		case strings.HasPrefix(line, "VmHWM:"):
			s.Peak = kB(strings.TrimPrefix(line, "VmHWM:"))
		}
	}
	return s
}

// ResetPeak resets VmHWM to the current resident set (writing "5" to /proc/self/clear_refs, Linux
// 4.0 and later); false when the kernel does not allow it.
func ResetPeak() bool {
	f, err := os.OpenFile("/proc/self/clear_refs", os.O_WRONLY, 0)
	if err != nil {
		return false
	}
	_, err = f.WriteString("5")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err == nil
}

// kB parses " 123 kB" as bytes (0 when it cannot).
func kB(s string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "kB")), 10, 64)
	if err != nil {
		return 0
	}
	return n << 10
}
