//go:build !darwin

package activity

// observeSleep does nothing off macOS: WillSleep runs the sleepers only when called.
func observeSleep() {}
