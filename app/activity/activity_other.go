//go:build !darwin

package activity

// Hold does nothing off macOS; the returned function does nothing either.
func Hold(reason string) (end func()) { return func() {} }

// begin does nothing off macOS.
func begin(options uint64, reason string) (end func()) { return func() {} }
