package metal

import "errors"

// Try is the rule every network's device runner follows: run device when there is one (not nil)
// and, when it declines the work with a *Declined, tell onDecline (when not nil) and run cpu
// instead. onDevice reports where the result came from. A device failure other than a decline is
// returned as it is, without running cpu.
func Try[T any](device, cpu func() (T, error), onDecline func(*Declined)) (out T, onDevice bool, err error) {
	if device != nil {
		out, err = device()
		if err == nil {
			return out, true, nil
		}
		var d *Declined
		if !errors.As(err, &d) {
			return out, false, err
		}
		if onDecline != nil {
			onDecline(d)
		}
	}
	out, err = cpu()
	return out, false, err
}
