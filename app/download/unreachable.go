package download

import (
	"errors"
	"fmt"
	"net"
	"net/url"
)

// UnreachableError is a hub that could not be reached at all — its name did not resolve, or
// nothing answered — which offline is what it usually means. Its message is a plain sentence;
// the network's own error stays inside (errors.As / Unwrap) for logs.
type UnreachableError struct {
	Host string
	Err  error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("%s cannot be reached: this computer seems to be offline, or a firewall blocks it. Connect to the internet and try again, or download the snapshot on another machine and convert it here", e.Host)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// unreachable is err as an UnreachableError when it says the hub at base could not be reached
// (no name resolution, no connection), else nil.
func unreachable(base string, err error) error {
	var dns *net.DNSError
	var op *net.OpError
	if !errors.As(err, &dns) && !(errors.As(err, &op) && op.Op == "dial") {
		return nil
	}
	host := base
	if u, perr := url.Parse(base); perr == nil && u.Host != "" {
		host = u.Hostname()
	}
	return &UnreachableError{Host: host, Err: err}
}
