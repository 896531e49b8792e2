package procmem

import (
	"runtime"
	"testing"
)

// TestIntervalSeesAnAllocation touches 64 MiB inside an interval: its peak is at least the
// footprint at its start, and on Linux at least 32 MiB above it (the pages were resident).
func TestIntervalSeesAnAllocation(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("the footprint is read on Linux and macOS only")
	}
	start := Read()
	iv := Begin()
	buf := make([]byte, 64<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	peak := iv.End()
	runtime.KeepAlive(buf)
	t.Logf("footprint %d MiB at the start, interval peak %d MiB (exact: %v; %s)", start.Now>>20, peak>>20, iv.Exact(), Method(iv.Exact()))
	if peak <= 0 || peak < start.Now {
		t.Fatalf("interval peak %d below the footprint at its start %d", peak, start.Now)
	}
	if runtime.GOOS == "linux" && peak < start.Now+32<<20 {
		t.Errorf("interval peak %d MiB does not show the 64 MiB touched after %d MiB", peak>>20, start.Now>>20)
	}
}
