package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// hashes are the model files' SHA-256s, A1111's checkpoint identity (sd_model_hash is its
// first 10 hex digits, sd-models' sha256 the whole): each file is read once, in the background,
// and the result kept by name, size and modification time — in memory, and in a folder
// (Config.HashCache) so the next server knows it without reading the file again. Never computed
// on a request.
type hashes struct {
	dir string

	mu      sync.Mutex
	known   map[hashKey]string
	running map[hashKey]chan struct{}
}

// hashKey identifies a file's content as far as the cache trusts it.
type hashKey struct {
	Name  string
	Size  int64
	MTime int64
}

// hashRegistry holds one hashes per cache folder for the process, so a server started again
// (the window's "Share this Mac" switched off and on) does not read the model file again.
var hashRegistry sync.Map // dir → *hashes

func newHashes(dir string) *hashes {
	h, _ := hashRegistry.LoadOrStore(dir, &hashes{dir: dir, known: map[hashKey]string{}, running: map[hashKey]chan struct{}{}})
	return h.(*hashes)
}

func keyOf(path string) (hashKey, bool) {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return hashKey{}, false
	}
	return hashKey{Name: filepath.Base(path), Size: st.Size(), MTime: st.ModTime().UnixNano()}, true
}

// cacheFile is where a key's hash is kept on disk.
func (h *hashes) cacheFile(k hashKey) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d", k.Name, k.Size, k.MTime)))
	return filepath.Join(h.dir, hex.EncodeToString(sum[:8])+".json")
}

// lookup is the file's SHA-256 when known (memory or the cache folder), else "" and the work is
// started in the background.
func (h *hashes) lookup(path string) string {
	k, ok := keyOf(path)
	if !ok {
		return ""
	}
	h.mu.Lock()
	if s, ok := h.known[k]; ok {
		h.mu.Unlock()
		return s
	}
	if h.dir != "" {
		var rec struct {
			Key    hashKey `json:"key"`
			SHA256 string  `json:"sha256"`
		}
		if b, err := os.ReadFile(h.cacheFile(k)); err == nil && json.Unmarshal(b, &rec) == nil && rec.Key == k && len(rec.SHA256) == 64 {
			h.known[k] = rec.SHA256
			h.mu.Unlock()
			return rec.SHA256
		}
	}
	if _, busy := h.running[k]; !busy {
		done := make(chan struct{})
		h.running[k] = done
		go h.compute(path, k, done)
	}
	h.mu.Unlock()
	return ""
}

func (h *hashes) compute(path string, k hashKey, done chan struct{}) {
	defer close(done)
	sum, err := fileSHA256(path)
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.running, k)
	if err != nil {
		return // asked again on the next lookup
	}
	if now, ok := keyOf(path); !ok || now != k {
		return // the file changed while it was read
	}
	h.known[k] = sum
	if h.dir != "" {
		rec := map[string]any{"key": k, "sha256": sum}
		if b, err := json.Marshal(rec); err == nil && os.MkdirAll(h.dir, 0o755) == nil {
			tmp := h.cacheFile(k) + ".tmp"
			if os.WriteFile(tmp, b, 0o644) == nil {
				os.Rename(tmp, h.cacheFile(k))
			}
		}
	}
}

// wait is lookup that waits (until ctx ends) for the background read.
func (h *hashes) wait(ctx context.Context, path string) string {
	for {
		if s := h.lookup(path); s != "" {
			return s
		}
		k, ok := keyOf(path)
		if !ok {
			return ""
		}
		h.mu.Lock()
		done := h.running[k]
		h.mu.Unlock()
		if done == nil {
			continue // finished between the two looks (or failed: lookup starts it again)
		}
		select {
		case <-done:
		case <-ctx.Done():
			return ""
		}
	}
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	d := sha256.New()
	if _, err := io.Copy(d, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(d.Sum(nil)), nil
}

// shortHash is A1111's shorthash: the first 10 hex digits (nil while unknown).
func shortHash(sum string) any {
	if len(sum) < 10 {
		return nil
	}
	return sum[:10]
}

// orNil is a full hash or nil while unknown.
func orNil(sum string) any {
	if sum == "" {
		return nil
	}
	return sum
}

// ModelHash waits (until ctx ends) for the current model's SHA-256 and returns A1111's short
// hash of it ("" when it cannot be read): `easel serve` logs it, tests wait for it.
func (s *Server) ModelHash(ctx context.Context) string {
	_, path, _ := s.models.current()
	sum := s.hashes.wait(ctx, path)
	if len(sum) < 10 {
		return ""
	}
	return sum[:10]
}

// modelPaths are the files of the model folder with the current model's own path.
func (s *Server) modelPaths() []string {
	cur, curPath, _ := s.models.current()
	var out []string
	for _, n := range s.models.list() {
		if n == cur {
			out = append(out, curPath)
		} else {
			out = append(out, filepath.Join(s.models.dir, n))
		}
	}
	return out
}

// WaitModelHashes waits (until ctx ends) until every model of the folder has its hash, as
// /sdapi/v1/sd-models lists them (tests wait for it before comparing titles).
func (s *Server) WaitModelHashes(ctx context.Context) {
	for _, p := range s.modelPaths() {
		s.hashes.wait(ctx, p)
	}
}
