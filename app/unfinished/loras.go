package unfinished

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sync"

	"easel/app/checkpoint"
	"easel/engine/pipeline"
)

// hashCache keeps the SHA-256 of the LoRA files hashed, by path, size and modification time, so
// a LoRA used by every job is read once.
var hashCache sync.Map // hashKey → string

type hashKey struct {
	path    string
	size    int64
	modTime int64
}

// fileSHA256 is the whole file's SHA-256 (lower-case hex), as engine/lora records it.
func fileSHA256(path string) (string, error) {
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

// checkpointLoRAs are the request's LoRA files as a checkpoint records them (path, SHA-256,
// strength, in order). A file that cannot be read is recorded without its digest, which no
// resume matches.
func checkpointLoRAs(files []pipeline.LoRAFile) ([]checkpoint.LoRA, error) {
	var out []checkpoint.LoRA
	var first error
	for _, lf := range files {
		sum, err := fileSHA256(lf.Path)
		if err != nil && first == nil {
			first = fmt.Errorf("LoRA %s cannot be read: %w", lf.Path, err)
		}
		out = append(out, checkpoint.LoRA{Path: lf.Path, SHA256: sum, Strength: lf.Strength})
	}
	return out, first
}

// hashLoRAs starts hashing the request's LoRA files at once (the job is queued; its first step is
// seconds away) and returns what waits for the digests.
func hashLoRAs(files []pipeline.LoRAFile) func() []checkpoint.LoRA {
	files = append([]pipeline.LoRAFile(nil), files...)
	done := make(chan struct{})
	var ls []checkpoint.LoRA
	go func() {
		defer close(done)
		ls, _ = checkpointLoRAs(files)
	}()
	return func() []checkpoint.LoRA {
		<-done
		return ls
	}
}
