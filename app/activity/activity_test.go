package activity

import "testing"

// TestHoldEnds: Hold returns an end that may be called more than once (off macOS both do nothing;
// on a Mac the assertion shows in `pmset -g assertions` while held — not checked here).
func TestHoldEnds(t *testing.T) {
	end := Hold(Reason)
	end()
	end()
}
