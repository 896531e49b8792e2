package device

import "unsafe"

// StructBytes returns the bytes of *v, for SetBytes. T must be a struct of fixed-size numbers laid
// out like the kernel's parameter struct (little-endian, naturally aligned, no Go pointers).
func StructBytes[T any](v *T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v))
}

// View returns buf's memory as a slice of T (float32, uint16 half bits, int8, ...). The length is
// rounded down to whole elements. The slice aliases the buffer: it is valid until Release.
func View[T any](buf Buffer) []T {
	b := buf.Bytes()
	var zero T
	n := len(b) / int(unsafe.Sizeof(zero))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}
