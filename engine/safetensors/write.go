package safetensors

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
)

// Encode lays out a safetensors image of the given tensors (in order) and metadata. Each
// tensor's Data must hold exactly its dtype and shape's bytes.
func Encode(tensors []*Tensor, metadata map[string]string) ([]byte, error) {
	header := map[string]any{}
	if len(metadata) > 0 {
		header["__metadata__"] = metadata
	}
	var off int64
	for _, t := range tensors {
		size, ok := DTypeSize(t.DType)
		if !ok {
			return nil, fmt.Errorf("safetensors: tensor %q has unknown dtype %q", t.Name, t.DType)
		}
		if len(t.Data) != t.Elements()*size {
			return nil, fmt.Errorf("safetensors: tensor %q holds %d bytes, %s%v needs %d", t.Name, len(t.Data), t.DType, t.Shape, t.Elements()*size)
		}
		if _, dup := header[t.Name]; dup {
			return nil, fmt.Errorf("safetensors: tensor %q given twice", t.Name)
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		header[t.Name] = entry{DType: t.DType, Shape: shape, Offsets: [2]int64{off, off + int64(len(t.Data))}}
		off += int64(len(t.Data))
	}
	h, err := json.Marshal(header)
	if err != nil {
		return nil, err
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	buf := binary.LittleEndian.AppendUint64(make([]byte, 0, 8+len(h)+int(off)), uint64(len(h)))
	buf = append(buf, h...)
	for _, t := range tensors {
		buf = append(buf, t.Data...)
	}
	return buf, nil
}

// WriteFile writes Encode's image to path.
func WriteFile(path string, tensors []*Tensor, metadata map[string]string) error {
	buf, err := Encode(tensors, metadata)
	if err != nil {
		return err
	}
	return os.WriteFile(path, buf, 0o644)
}

// F32Tensor is a float32 tensor of the given shape, for building files.
func F32Tensor(name string, shape []int, values []float32) *Tensor {
	data := make([]byte, 4*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
	}
	return &Tensor{Name: name, DType: "F32", Shape: shape, Data: data}
}
