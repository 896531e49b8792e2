package memplan

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// Resident is the process's resident memory now, as /proc/self/status reports it: the total
// (VmRSS) and the part that maps files (RssFile: the model's weights read in place).
func Resident() (total, file int64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok {
			continue
		}
		f := bytes.Fields(v)
		if len(f) == 0 {
			continue
		}
		kb, _ := strconv.ParseInt(string(f[0]), 10, 64)
		switch string(k) {
		case "VmRSS":
			total = kb << 10
		case "RssFile":
			file = kb << 10
		}
	}
	return total, file
}

// PeakResident is getrusage's high-water mark of the resident set (ru_maxrss, KiB on Linux).
func PeakResident() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return int64(ru.Maxrss) << 10
}
