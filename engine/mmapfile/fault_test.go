package mmapfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mappedThenTruncated maps a 64 KiB file and truncates it to one page, so reads past the first
// page fault (SIGBUS) as they would after a drive is unplugged.
func mappedThenTruncated(t *testing.T) (*File, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "weights.bin")
	if err := os.WriteFile(path, make([]byte, 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	m.Describe("model file", "reconnect the drive or choose the model again")
	if err := m.Changed(); err != nil {
		t.Fatalf("Changed on an untouched file: %v", err)
	}
	if err := os.Truncate(path, int64(os.Getpagesize())); err != nil {
		t.Fatal(err)
	}
	return m, path
}

// readLast reads the mapping's last byte on the calling goroutine, guarded.
func readLast(m *File) (b byte, err error) {
	defer Recover(&err)
	defer Guard()()
	data := m.Bytes()
	return data[len(data)-1], nil
}

func checkFault(t *testing.T, err error, path string) {
	t.Helper()
	var fe *FaultError
	if !errors.As(err, &fe) {
		t.Fatalf("got %v (%T), want a *FaultError", err, err)
	}
	if fe.Path != path || fe.Size != 64<<10 || fe.Now != int64(os.Getpagesize()) || fe.Err == nil {
		t.Errorf("fault %+v: want path %s, size %d, now %d and the runtime's fault", fe, path, 64<<10, os.Getpagesize())
	}
	msg := err.Error()
	for _, want := range []string{"the model file " + path + " changed or became unreadable", "it is now " + ByteSize(int64(os.Getpagesize())) + " of 65.5 kB", "reconnect the drive or choose the model again"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}

// A fault reading a truncated mapping on a guarded goroutine becomes a *FaultError naming the
// file, its size then and now, and what to do.
func TestFaultOnTheCallingGoroutineBecomesAFaultError(t *testing.T) {
	m, path := mappedThenTruncated(t)
	_, err := readLast(m)
	checkFault(t, err, path)
	if err := m.Changed(); err == nil {
		t.Error("Changed on a truncated file: nil")
	}
	// The first page is still there: reading it does not fault.
	if _, err := func() (b byte, err error) { defer Recover(&err); defer Guard()(); return m.Bytes()[0], nil }(); err != nil {
		t.Errorf("reading the first page: %v", err)
	}
}

// A fault in a Group's worker reaches the caller of Wait as the *FaultError, and the process
// lives on.
func TestFaultInAGroupWorkerReachesWait(t *testing.T) {
	m, path := mappedThenTruncated(t)
	err := func() (err error) {
		defer Recover(&err)
		var g Group
		var sum byte
		for w := 0; w < 3; w++ {
			g.Go(func() {
				if w == 1 {
					data := m.Bytes()
					sum += data[len(data)-1]
				}
			})
		}
		g.Wait()
		return nil
	}()
	checkFault(t, err, path)
}

// Any other panic in a worker is raised again by Wait as a *WorkerPanic with the worker's stack;
// Recover lets it through.
func TestOtherPanicsInAGroupWorkerReachWaitUnchanged(t *testing.T) {
	v := func() (v any) {
		defer func() { v = recover() }()
		var err error
		defer Recover(&err)
		var g Group
		g.Go(func() { panic("a bug") })
		g.Wait()
		return nil
	}()
	wp, ok := v.(*WorkerPanic)
	if !ok || wp.Value != "a bug" || !strings.Contains(string(wp.Stack), "fault_test.go") {
		t.Fatalf("recovered %#v, want a *WorkerPanic of \"a bug\" with the worker's stack", v)
	}
	if _, ok := AsFault(v); ok {
		t.Error("AsFault took a plain panic for a fault")
	}
}

// A fault outside any mapping (a nil pointer) is not a FaultError.
func TestNilDereferenceIsNotAFault(t *testing.T) {
	v := func() (v any) {
		defer func() { v = recover() }()
		defer Guard()()
		var p *int
		return *p
	}()
	if v == nil {
		t.Fatal("no panic")
	}
	if _, ok := AsFault(v); ok {
		t.Errorf("AsFault(%v) took a nil dereference for a fault in a mapping", v)
	}
}
