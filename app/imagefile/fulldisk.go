package imagefile

import (
	"os"
	"sync/atomic"
	"syscall"
)

// fullDiskAfter, when set, is how many bytes WriteFile may write before the disk is "full".
var fullDiskAfter atomic.Pointer[int]

// FailWritesAfter makes every WriteFile from now on fail as on a full disk: the temporary file is
// really created in the destination folder, its first limit bytes are written, and the next write
// fails with ENOSPC — until restore is called. It exists for tests of the code that saves images
// (the CLI, the window), which cannot fill a real disk; nothing else calls it.
func FailWritesAfter(limit int) (restore func()) {
	fullDiskAfter.Store(&limit)
	return func() { fullDiskAfter.Store(nil) }
}

// fullDiskFile is a real temporary file whose writes fail with ENOSPC after limit bytes.
type fullDiskFile struct {
	*os.File
	limit int
}

func (f *fullDiskFile) Write(b []byte) (int, error) {
	if len(b) > f.limit {
		n, _ := f.File.Write(b[:f.limit])
		f.limit = 0
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	f.limit -= len(b)
	return f.File.Write(b)
}
