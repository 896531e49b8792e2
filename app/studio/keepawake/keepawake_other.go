//go:build !darwin

package keepawake

// Hold does nothing off macOS: there is no idle sleep to hold off here.
func Hold(reason string) (release func()) { return func() {} }
