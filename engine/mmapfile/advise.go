package mmapfile

import "os"

// Advice tells the kernel how a range of the mapping will be used.
type Advice int

const (
	// WillNeed asks for the range to be read ahead into the page cache now (MADV_WILLNEED); the
	// pages join the process's resident set only when they are touched.
	WillNeed Advice = iota
	// DontNeed drops the range's pages from the process's resident set (MADV_DONTNEED). The
	// mapping is read-only and shared, so nothing is lost: the page cache keeps the data while
	// memory allows, and a later read faults it back in.
	DontNeed
)

// Advise applies a to the bytes [off, off+n) of the mapping, widened to whole pages. It is
// advisory: where the system has no such call it does nothing.
func (m *File) Advise(off, n int64, a Advice) error {
	if m == nil || !m.owned || n <= 0 || off < 0 || off >= int64(len(m.data)) {
		return nil
	}
	page := int64(os.Getpagesize())
	start := off / page * page
	end := min((off+n+page-1)/page*page, int64(len(m.data)))
	return advise(m.data[start:end], a)
}
