//go:build linux || darwin

package mmapfile

import (
	"fmt"

	"golang.org/x/sys/unix"
)

func advise(b []byte, a Advice) error {
	advice := unix.MADV_WILLNEED
	if a == DontNeed {
		advice = unix.MADV_DONTNEED
	}
	if err := unix.Madvise(b, advice); err != nil {
		return fmt.Errorf("madvise: %w", err)
	}
	return nil
}
