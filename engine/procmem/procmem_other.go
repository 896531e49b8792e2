//go:build !linux && !darwin

package procmem

const (
	resetMethod   = "not measured on this OS"
	sampledMethod = "not measured on this OS"
)

// Read is zero: this OS's footprint is not read.
func Read() Sample { return Sample{} }

// ResetPeak is false.
func ResetPeak() bool { return false }
