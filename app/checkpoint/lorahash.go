package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sync"
)

// hashCache keeps the SHA-256 of the LoRA files hashed, by path, size and modification time, so
// a LoRA used by every job is read once.
var hashCache sync.Map // hashKey → string

type hashKey struct {
	path    string
	size    int64
	modTime int64
}

// FileSHA256 is the whole file's SHA-256 (lower-case hex, as engine/lora records it), cached
// while the file's size and modification time stay the same.
func FileSHA256(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	key := hashKey{path, st.Size(), st.ModTime().UnixNano()}
	if h, ok := hashCache.Load(key); ok {
		return h.(string), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	hashCache.Store(key, sum)
	return sum, nil
}

// HashLoRAs fills in the SHA-256 of each LoRA (by its Path). One that cannot be read is left
// without its digest, which no resume matches, and the first such is the error.
func HashLoRAs(ls []LoRA) ([]LoRA, error) {
	out := make([]LoRA, len(ls))
	var first error
	for i, l := range ls {
		sum, err := FileSHA256(l.Path)
		if err != nil && first == nil {
			first = fmt.Errorf("LoRA %s cannot be read: %w", l.Path, err)
		}
		l.SHA256 = sum
		out[i] = l
	}
	if len(out) == 0 {
		return nil, first
	}
	return out, first
}
