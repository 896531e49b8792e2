//go:build !cgo || !linux

package cpu

// dotQ8 is the Go dot product without cgo, and on macOS (gemv_cgo.go is the Linux build).
func dotQ8(codes []byte, x []float32, out []float32) { dotQ8Go(codes, x, out) }
