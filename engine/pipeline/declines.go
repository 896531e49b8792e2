package pipeline

import (
	"fmt"
	"sync"
)

// declineLog collects what a device runner of one network declined while a call ran (it reports
// through the logf it was given) as sentences for the user, which Run turns into notices.
type declineLog struct {
	network string // "the VAE", "the text encoder"

	mu      sync.Mutex
	pending []string
}

// declined is the runner's logf.
func (l *declineLog) declined(format string, args ...any) {
	l.mu.Lock()
	l.pending = append(l.pending, "Metal declined "+l.network+": "+reason(fmt.Sprintf(format, args...))+"; the CPU runs it instead")
	l.mu.Unlock()
}

// takeNotices returns and clears the declines so far.
func (l *declineLog) takeNotices() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.pending
	l.pending = nil
	return n
}
