// Package mmapfile maps a whole file read-only into memory, so that model weights and reference
// tensors can be read in place as byte slices without copying them.
//
// A mapping is only as good as the file under it: when the file is truncated, replaced or its
// drive goes away while it is mapped, reading the mapping faults (SIGBUS). fault.go turns such a
// fault into a *FaultError on the goroutine that hit it, and Group carries it (and any other
// panic) from worker goroutines back to their caller.
package mmapfile

import (
	"fmt"
	"os"
	"syscall"
)

// File is a read-only mapping of a whole file. Bytes stays valid until Close.
type File struct {
	Path  string
	data  []byte
	owned bool // data came from mmap (false for an empty file)
	// kind and remedy describe the file in a FaultError ("model file", "reconnect the drive or
	// choose the model again"); Describe sets them.
	kind, remedy string
}

// Open maps path read-only. An empty file maps to an empty slice.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a folder, not a file", path)
	}
	size := st.Size()
	if size == 0 {
		return &File{Path: path, data: []byte{}}, nil
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("%s: %d bytes is too large to map on this machine", path, size)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mapping %s (%d bytes): %w", path, size, err)
	}
	m := &File{Path: path, data: data, owned: true}
	register(m)
	return m, nil
}

// Bytes is the file's content, backed by the mapping. Do not write to it.
func (m *File) Bytes() []byte { return m.data }

// Size is the file's length in bytes.
func (m *File) Size() int64 { return int64(len(m.data)) }

// Close unmaps the file. Slices obtained from Bytes must not be used afterwards.
func (m *File) Close() error {
	if m == nil || !m.owned {
		return nil
	}
	unregister(m)
	m.owned = false
	d := m.data
	m.data = nil
	return syscall.Munmap(d)
}
