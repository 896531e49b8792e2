package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"easel/engine/cmf"
)

// Fingerprint identifies a model file's content without reading its weights: the SHA-256 of its
// header JSON and of every tensor record (name, codec, shape, size and the payload's hash64 the
// file stores). A checkpoint records it; easel generate records it in the PNG too.
func Fingerprint(f *cmf.File) string {
	h := sha256.New()
	h.Write(f.HeaderJSON())
	for _, e := range f.Entries() {
		fmt.Fprintf(h, "\x00%s\x00%d\x00%v\x00%d\x00%016x", e.Name, e.DType, e.Shape, e.Size, e.Hash)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// FingerprintFile is the Fingerprint of the model file at path.
func FingerprintFile(path string) (string, error) {
	f, err := cmf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return Fingerprint(f), nil
}
