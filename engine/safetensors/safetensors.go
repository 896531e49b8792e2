// Package safetensors reads Hugging Face safetensors files in place: the header is parsed and each
// tensor is a byte slice into the file mapping, never a copy. The converter and the reference-data
// tests both read through it.
package safetensors

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"

	"easel/engine/mmapfile"
)

// maxHeader bounds the JSON header so a corrupt length field cannot make us allocate gigabytes.
const maxHeader = 100 << 20

// Tensor is one entry of a safetensors file. Data aliases the file mapping.
type Tensor struct {
	Name  string
	DType string // "F32", "F16", "BF16", "I64", "U8", ...
	Shape []int
	Data  []byte
}

// Elements is the product of the shape (1 for a scalar).
func (t *Tensor) Elements() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// File is a parsed safetensors file.
type File struct {
	Path     string
	Metadata map[string]string
	tensors  map[string]*Tensor
	names    []string // in data order
	mapping  *mmapfile.File
	image    []byte
}

// Open maps and parses path. Close releases the mapping.
func Open(path string) (*File, error) {
	m, err := mmapfile.Open(path)
	if err != nil {
		return nil, err
	}
	f, err := Parse(m.Bytes())
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.Path = path
	f.mapping = m
	return f, nil
}

// Close releases the mapping; tensors read from the file must not be used afterwards.
func (f *File) Close() error {
	if f == nil || f.mapping == nil {
		return nil
	}
	return f.mapping.Close()
}

type entry struct {
	DType   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// Parse reads a safetensors image held in buf (typically a mapping). Tensors alias buf.
func Parse(buf []byte) (*File, error) {
	if len(buf) < 8 {
		return nil, fmt.Errorf("not a safetensors file: %d bytes is shorter than the 8-byte header length", len(buf))
	}
	n := binary.LittleEndian.Uint64(buf[:8])
	if n > maxHeader || n > uint64(len(buf)-8) {
		return nil, fmt.Errorf("not a safetensors file, or truncated: header length %d does not fit in the file's %d bytes", n, len(buf))
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(buf[8:8+n], &raw); err != nil {
		return nil, fmt.Errorf("safetensors header is not valid JSON: %v", err)
	}
	data := buf[8+n:]
	f := &File{tensors: map[string]*Tensor{}, Metadata: map[string]string{}, image: buf}
	type placed struct {
		name  string
		start int64
	}
	var order []placed
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &f.Metadata); err != nil {
				return nil, fmt.Errorf("safetensors __metadata__ must map strings to strings: %v", err)
			}
			continue
		}
		var e entry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, fmt.Errorf("tensor %q: bad header entry: %v", name, err)
		}
		size, ok := DTypeSize(e.DType)
		if !ok {
			return nil, fmt.Errorf("tensor %q: unknown dtype %q", name, e.DType)
		}
		elems := int64(1)
		for _, d := range e.Shape {
			if d < 0 || (d > 0 && elems > (1<<62)/int64(d)) {
				return nil, fmt.Errorf("tensor %q: impossible shape %v", name, e.Shape)
			}
			elems *= int64(d)
		}
		start, end := e.Offsets[0], e.Offsets[1]
		if start < 0 || end < start || end > int64(len(data)) {
			return nil, fmt.Errorf("tensor %q: data range [%d, %d) lies outside the %d data bytes (file truncated?)", name, start, end, len(data))
		}
		if elems > (1<<62)/int64(size) {
			return nil, fmt.Errorf("tensor %q: shape %v of %s needs more bytes than any file holds", name, e.Shape, e.DType)
		}
		if end-start != elems*int64(size) {
			return nil, fmt.Errorf("tensor %q: %d bytes stored for %s%v, which needs %d", name, end-start, e.DType, e.Shape, elems*int64(size))
		}
		f.tensors[name] = &Tensor{Name: name, DType: e.DType, Shape: e.Shape, Data: data[start:end:end]}
		order = append(order, placed{name, start})
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].start != order[j].start {
			return order[i].start < order[j].start
		}
		return order[i].name < order[j].name
	})
	for _, p := range order {
		f.names = append(f.names, p.name)
	}
	return f, nil
}

// Bytes is the whole file image (the mapping, or the buffer given to Parse).
func (f *File) Bytes() []byte { return f.image }

// Names lists the tensors in the order their data appears in the file.
func (f *File) Names() []string { return append([]string(nil), f.names...) }

// Tensor returns the named tensor, or nil.
func (f *File) Tensor(name string) *Tensor { return f.tensors[name] }

// Get returns the named tensor or an error naming the file and the tensor.
func (f *File) Get(name string) (*Tensor, error) {
	if t := f.tensors[name]; t != nil {
		return t, nil
	}
	return nil, fmt.Errorf("%s: no tensor named %q", f.Path, name)
}

// DTypeSize is the byte size of one element of a safetensors dtype.
func DTypeSize(dtype string) (int, bool) {
	switch dtype {
	case "F64", "I64", "U64":
		return 8, true
	case "F32", "I32", "U32":
		return 4, true
	case "F16", "BF16", "I16", "U16":
		return 2, true
	case "I8", "U8", "BOOL", "F8_E4M3", "F8_E5M2":
		return 1, true
	}
	return 0, false
}
