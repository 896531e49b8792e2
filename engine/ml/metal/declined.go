package metal

import "fmt"

// Declined is the error a network's device path returns when it will not run a piece of work on
// the device (too little memory, a geometry the kernels do not handle, weights it cannot read in
// place). Nothing was left allocated; the caller runs the CPU path instead.
type Declined struct {
	// Reason is a sentence a user can read.
	Reason string
}

func (e *Declined) Error() string {
	return "metal: declined: " + e.Reason + " — the CPU backend runs this instead"
}

// Decline returns a *Declined error with a sentence a user can read.
func Decline(format string, args ...any) error {
	return &Declined{Reason: fmt.Sprintf(format, args...)}
}

// FormatBytes formats a byte count as decline sentences do: GB (decimal), or KB/MB when small.
func FormatBytes(n int64) string {
	switch {
	case n < 1e6:
		return fmt.Sprintf("%.0f KB", float64(n)/1e3)
	case n < 1e8:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f GB", float64(n)/1e9)
}

// FormatBytePair formats two sizes a sentence compares, in exact bytes when FormatBytes would print
// them alike.
func FormatBytePair(a, b int64) (string, string) {
	if FormatBytes(a) == FormatBytes(b) && a != b {
		return fmt.Sprintf("%d bytes", a), fmt.Sprintf("%d bytes", b)
	}
	return FormatBytes(a), FormatBytes(b)
}
