package cmf

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"

	"easel/engine/quant"
)

// Entry is one tensor directory record (cmf.md §4).
type Entry struct {
	Name   string
	DType  quant.DType
	Shape  []int
	Offset uint64 // relative to the data section's start; a multiple of 64
	Size   uint64 // payload bytes
	Hash   uint64 // Hash64 of the payload
}

// decodeDirectory parses the directory section and checks each record against the data section
// exactly as cortiq does: known dtype, ndim ≤ 6, names inside the pool and valid UTF-8, offsets
// 64-aligned, payloads inside the data section, payload sizes equal to the codec's size where it
// is defined, no duplicate names. The record count is bounded by the section length before any
// allocation.
func decodeDirectory(path string, dir []byte, dataLen uint64) ([]Entry, error) {
	if len(dir) < dirPreambleSize {
		return nil, corrupt(path, "", adviceRedownload, "the tensor directory is %d bytes, shorter than its 16-byte preamble", len(dir))
	}
	count := binary.LittleEndian.Uint64(dir[0:])
	poolOff := binary.LittleEndian.Uint64(dir[8:])
	maxCount := uint64(len(dir)-dirPreambleSize) / dirRecordSize
	if count > maxCount {
		return nil, corrupt(path, "", adviceRedownload, "the tensor directory claims %d tensors but its %d bytes hold at most %d", count, len(dir), maxCount)
	}
	recordsEnd := dirPreambleSize + count*dirRecordSize
	if poolOff < recordsEnd || poolOff > uint64(len(dir)) {
		return nil, corrupt(path, "", adviceRedownload, "the tensor directory's name pool starts at %d, outside [%d, %d]", poolOff, recordsEnd, len(dir))
	}
	pool := dir[poolOff:]
	// Capacity grows only as records validate, so a huge count in a huge (corrupt) directory
	// costs memory in proportion to the valid records, not to the claim.
	entries := make([]Entry, 0, min(count, 1<<12))
	seen := make(map[string]struct{}, min(count, 1<<12))
	for i := range count {
		r := dir[dirPreambleSize+i*dirRecordSize:][:dirRecordSize]
		nameOff := uint64(binary.LittleEndian.Uint32(r[0:]))
		nameLen := uint64(binary.LittleEndian.Uint16(r[4:]))
		if nameOff+nameLen > uint64(len(pool)) {
			return nil, corrupt(path, fmt.Sprintf("#%d", i), adviceRedownload, "its name [%d, +%d) lies outside the %d-byte name pool", nameOff, nameLen, len(pool))
		}
		nameBytes := pool[nameOff : nameOff+nameLen]
		if !utf8.Valid(nameBytes) {
			return nil, corrupt(path, fmt.Sprintf("#%d", i), adviceRedownload, "its name is not valid UTF-8")
		}
		entries = append(entries, Entry{Name: string(nameBytes)})
		e := &entries[len(entries)-1]
		e.DType = quant.DType(r[6])
		if !e.DType.Known() {
			return nil, corrupt(path, e.Name, adviceReconvert+" (or update Easel)", "unknown dtype id %d", r[6])
		}
		ndim := int(r[7])
		if ndim > maxNDim {
			return nil, corrupt(path, e.Name, adviceRedownload, "%d dimensions; the format allows at most %d", ndim, maxNDim)
		}
		e.Shape = make([]int, ndim)
		for d := range e.Shape {
			e.Shape[d] = int(binary.LittleEndian.Uint32(r[8+4*d:]))
		}
		e.Offset = binary.LittleEndian.Uint64(r[32:])
		e.Size = binary.LittleEndian.Uint64(r[40:])
		e.Hash = binary.LittleEndian.Uint64(r[48:])
		if _, dup := seen[e.Name]; dup {
			return nil, corrupt(path, e.Name, adviceRedownload, "the name appears twice in the tensor directory")
		}
		seen[e.Name] = struct{}{}
		if err := checkEntry(path, e, dataLen); err != nil {
			return nil, err
		}
	}
	return entries, nil
}

// checkEntry is the per-record validation shared by the reader and the writer.
func checkEntry(path string, e *Entry, dataLen uint64) error {
	if e.Offset%TensorAlignment != 0 {
		return corrupt(path, e.Name, adviceRedownload, "its payload offset %d is not a multiple of %d", e.Offset, TensorAlignment)
	}
	end := e.Offset + e.Size
	if end < e.Offset || end > dataLen {
		return corrupt(path, e.Name, adviceRedownload, "its payload [%d, %d) lies outside the %d-byte data section", e.Offset, e.Offset+e.Size, dataLen)
	}
	n := uint64(1)
	for _, d := range e.Shape {
		if d != 0 && n > (1<<63)/uint64(d) {
			return corrupt(path, e.Name, adviceRedownload, "shape %v has more elements than any machine can address", e.Shape)
		}
		n *= uint64(d)
	}
	want, ok := quant.PayloadSize(e.DType, e.Shape)
	switch {
	case ok && uint64(want) != e.Size:
		return corrupt(path, e.Name, adviceRedownload, "%d payload bytes, but %s%v needs exactly %d", e.Size, e.DType, e.Shape, want)
	case !ok && sizeFromShape(e.DType):
		return corrupt(path, e.Name, adviceReconvert, "shape %v does not suit the %s codec", e.Shape, e.DType)
	}
	return nil
}

// sizeFromShape reports whether a dtype's payload size follows from its shape, so that a shape
// PayloadSize rejects is an error. For the others (u8 blobs, variable-length and reserved codecs)
// the directory's span is trusted, as cortiq does.
func sizeFromShape(d quant.DType) bool {
	switch d {
	case quant.U8, quant.Mix8_4, quant.Q4Col, quant.VBit, quant.VBitRO, quant.Q1S, quant.Q1T:
		return false
	}
	return true
}

// encodeDirectory lays the entries out as cortiq's encode_directory does: preamble, records,
// then the names back to back. Callers have checked names (≤ 65535 bytes), ndim and dimensions.
func encodeDirectory(entries []Entry) []byte {
	poolLen := 0
	for i := range entries {
		poolLen += len(entries[i].Name)
	}
	poolOff := dirPreambleSize + len(entries)*dirRecordSize
	out := make([]byte, poolOff, poolOff+poolLen)
	binary.LittleEndian.PutUint64(out[0:], uint64(len(entries)))
	binary.LittleEndian.PutUint64(out[8:], uint64(poolOff))
	nameOff := 0
	for i := range entries {
		e := &entries[i]
		r := out[dirPreambleSize+i*dirRecordSize:][:dirRecordSize]
		binary.LittleEndian.PutUint32(r[0:], uint32(nameOff))
		binary.LittleEndian.PutUint16(r[4:], uint16(len(e.Name)))
		r[6] = byte(e.DType)
		r[7] = byte(len(e.Shape))
		for d, v := range e.Shape {
			binary.LittleEndian.PutUint32(r[8+4*d:], uint32(v))
		}
		binary.LittleEndian.PutUint64(r[32:], e.Offset)
		binary.LittleEndian.PutUint64(r[40:], e.Size)
		binary.LittleEndian.PutUint64(r[48:], e.Hash)
		nameOff += len(e.Name)
	}
	for i := range entries {
		out = append(out, entries[i].Name...)
	}
	return out
}
