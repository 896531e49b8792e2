package safetensors

import (
	"encoding/binary"
	"testing"
)

// build lays out a safetensors image: the 8-byte header length, the header JSON, the data.
func build(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), data...)
}

// FuzzParse feeds arbitrary bytes to the parser: it must return a file or an error, never panic,
// and every tensor it accepts must hold exactly the bytes its dtype and shape need, inside the input.
func FuzzParse(f *testing.F) {
	f.Add(build(`{"__metadata__":{"json":"{}"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8)))
	f.Add(build(`{"w":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]},"i":{"dtype":"I64","shape":[],"data_offsets":[8,16]},`+
		`"m":{"dtype":"U8","shape":[3],"data_offsets":[16,19]}}`, []byte("0123456789abcdefxyz")))
	f.Add(build(`{"h":{"dtype":"F16","shape":[1,0],"data_offsets":[0,0]}}`, nil))
	f.Add([]byte{1, 2, 3})
	// 2^61 F64 elements need 2^64 bytes, which wraps to 0 in int64 arithmetic.
	f.Add(build(`{"x":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,0]}}`, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Parse(b)
		if err != nil {
			return
		}
		names := file.Names()
		for _, name := range names {
			tt, err := file.Get(name)
			if err != nil {
				t.Fatalf("listed tensor %q: %v", name, err)
			}
			size, _ := DTypeSize(tt.DType)
			if len(tt.Data) != tt.Elements()*size {
				t.Fatalf("tensor %q: %s%v accepted with %d bytes", name, tt.DType, tt.Shape, len(tt.Data))
			}
			if len(tt.Data) > len(b) {
				t.Fatalf("tensor %q: %d bytes from a %d-byte input", name, len(tt.Data), len(b))
			}
			tt.Float32s()
			tt.Int64s()
		}
	})
}
