package download

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeHub serves a folder as a Hugging Face–style repository on loopback: the tree listing with
// sizes and hashes, and the files with Range support. Faults can be injected per path.
type fakeHub struct {
	t     *testing.T
	repo  string
	files map[string][]byte // path → content
	lfs   map[string]bool   // served as LFS (sha256) rather than git (blob sha1)

	mu       sync.Mutex
	cutOnce  map[string]int64 // break the connection after this many bytes, once
	corrupt  map[string]int   // serve a flipped byte this many times
	missing  map[string]bool  // listed but answered 404
	requests []string         // "path range" of every file request
}

func newFakeHub(t *testing.T, dir, repo string) *fakeHub {
	h := &fakeHub{t: t, repo: repo, files: map[string][]byte{}, lfs: map[string]bool{},
		cutOnce: map[string]int64{}, corrupt: map[string]int{}, missing: map[string]bool{}}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		h.files[rel] = b
		h.lfs[rel] = strings.HasSuffix(rel, ".safetensors") || len(b) > 1<<20
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *fakeHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	listPrefix := "/api/models/" + h.repo + "/tree/main"
	filePrefix := "/" + h.repo + "/resolve/main/"
	switch {
	case r.URL.Path == listPrefix:
		var entries []map[string]any
		for p, b := range h.files {
			e := map[string]any{"type": "file", "path": p, "size": len(b)}
			if h.lfs[p] {
				sum := sha256.Sum256(b)
				e["oid"] = "0000000000000000000000000000000000000000"
				e["lfs"] = map[string]any{"oid": hex.EncodeToString(sum[:]), "size": len(b)}
			} else {
				s := sha1.New()
				fmt.Fprintf(s, "blob %d\x00", len(b))
				s.Write(b)
				e["oid"] = hex.EncodeToString(s.Sum(nil))
			}
			entries = append(entries, e)
		}
		for p := range h.missing {
			entries = append(entries, map[string]any{"type": "file", "path": p, "size": 10, "oid": "00"})
		}
		entries = append(entries, map[string]any{"type": "directory", "path": "vae", "size": 0})
		json.NewEncoder(w).Encode(entries)
	case strings.HasPrefix(r.URL.Path, filePrefix):
		p := strings.TrimPrefix(r.URL.Path, filePrefix)
		h.mu.Lock()
		h.requests = append(h.requests, p+" "+r.Header.Get("Range"))
		cut, doCut := h.cutOnce[p]
		delete(h.cutOnce, p)
		bad := h.corrupt[p] > 0
		if bad {
			h.corrupt[p]--
		}
		missing := h.missing[p]
		h.mu.Unlock()
		b, ok := h.files[p]
		if !ok || missing {
			http.NotFound(w, r)
			return
		}
		if bad {
			b = append([]byte(nil), b...)
			b[len(b)/2] ^= 0xff
		}
		if doCut {
			w = &cuttingWriter{ResponseWriter: w, left: cut}
		}
		http.ServeContent(w, r, p, time.Unix(0, 0), bytes.NewReader(b))
	default:
		http.NotFound(w, r)
	}
}

// cuttingWriter breaks the connection after a number of body bytes, like a dropped network.
type cuttingWriter struct {
	http.ResponseWriter
	left int64
}

func (c *cuttingWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > c.left {
		n, _ := c.ResponseWriter.Write(p[:c.left])
		c.left = 0
		if f, ok := c.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		_ = n
		panic(http.ErrAbortHandler)
	}
	c.left -= int64(len(p))
	return c.ResponseWriter.Write(p)
}

func (h *fakeHub) requestsFor(p string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.requests {
		if strings.HasPrefix(r, p+" ") {
			out = append(out, r)
		}
	}
	return out
}
