//go:build !cgo || !linux

package cpu

// softmaxRange is the Go softmax without cgo, and on macOS, where -fopenmp-simd has not been
// tried with Apple clang (softmax_cgo.go is the Linux build).
func softmaxRange(scores, invSum []float32, lo, hi, m int, visible []int32, q0 int) {
	softmaxRangeGo(scores, invSum, lo, hi, m, visible, q0)
}
