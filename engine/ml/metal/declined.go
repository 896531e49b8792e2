package metal

import (
	"errors"
	"fmt"
)

// Declined is the error the denoiser returns when it will not run a piece of work on the device
// (too little memory, a geometry the kernels do not handle, weights it cannot read in place).
// Nothing was left allocated; the caller runs the CPU path instead.
type Declined struct {
	// Reason is a sentence a user can read.
	Reason string
}

func (e *Declined) Error() string {
	return "metal: declined: " + e.Reason + " — the CPU backend runs this instead"
}

// LogIfDeclined reports whether err is a *Declined and, when it is, tells logf (when not nil):
// how a runner decides that the CPU runs the work instead.
func LogIfDeclined(err error, logf func(format string, args ...any)) bool {
	var d *Declined
	if !errors.As(err, &d) {
		return false
	}
	if logf != nil {
		logf("%v", err)
	}
	return true
}

func decline(format string, args ...any) error {
	return &Declined{Reason: fmt.Sprintf(format, args...)}
}

// gb formats a byte count for decline sentences: GB (decimal), or KB/MB when small.
func gb(n int64) string {
	switch {
	case n < 1e6:
		return fmt.Sprintf("%.0f KB", float64(n)/1e3)
	case n < 1e8:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f GB", float64(n)/1e9)
}

// gbPair formats two sizes a sentence compares, in exact bytes when gb would print them alike.
func gbPair(a, b int64) (string, string) {
	if gb(a) == gb(b) && a != b {
		return fmt.Sprintf("%d bytes", a), fmt.Sprintf("%d bytes", b)
	}
	return gb(a), gb(b)
}
