package lora

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"path/filepath"

	"easel/engine/mmapfile"
	"easel/engine/safetensors"
)

// File is a LoRA file read from disk and bound to a model.
type File struct {
	*Adapter
	Path string
	// Name is the file name without its extension: the name written in A1111's <lora:NAME:…>.
	Name string
	// SHA256 is the whole file's SHA-256, lower-case hex (what Easel records in its images).
	SHA256 string
	// ShortHash is A1111's "Lora hashes" value: the first 12 hex digits of the SHA-256 of the
	// tensor bytes after the header (the AddNet/kohya hash, lora.md §5).
	ShortHash string
	// Preset is the sampling the file says it was made for (PresetForFile), or nil.
	Preset *Preset
}

// Open reads the LoRA file at path, binds it to layers and hashes it. The file is not kept
// open: the adapter owns copies of its factors.
func Open(path string, layers []Layer) (_ *File, err error) {
	defer mmapfile.Recover(&err) // the file changed while it was read: a *mmapfile.FaultError
	defer mmapfile.Guard()()
	st, err := safetensors.Open(path)
	if err != nil {
		return nil, fmt.Errorf("lora: %v: it is not a LoRA file Easel can read (LoRAs are .safetensors)", err)
	}
	defer st.Close()
	a, err := Bind(st, layers)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	whole, short := Hashes(st.Bytes())
	preset, err := PresetForFile(path, st.Metadata, whole)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	base := filepath.Base(path)
	return &File{Adapter: a, Path: path, Name: base[:len(base)-len(filepath.Ext(base))], SHA256: whole, ShortHash: short, Preset: preset}, nil
}

// Hashes returns the SHA-256 of a safetensors image (hex) and A1111's short hash of its tensor
// bytes (12 hex digits of the SHA-256 of everything after the 8-byte length and the header).
func Hashes(buf []byte) (whole, short string) {
	w := sha256.Sum256(buf)
	whole = hex.EncodeToString(w[:])
	if len(buf) >= 8 {
		n := binary.LittleEndian.Uint64(buf[:8])
		if n <= uint64(len(buf)-8) {
			s := sha256.Sum256(buf[8+n:])
			short = hex.EncodeToString(s[:])[:12]
		}
	}
	return whole, short
}
