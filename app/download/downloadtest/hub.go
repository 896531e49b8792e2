// Package downloadtest serves a folder as a Hugging Face–style model repository on loopback, for
// tests of code that downloads models (app/download, app/modelsetup, the first-run window): the
// tree listing with sizes and hashes, and the files with HTTP Range support.
package downloadtest

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"easel/app/download"
)

// Hub is a fake hub serving one repository. Files may be added before the first request.
type Hub struct {
	Repo  string
	files map[string][]byte // path → content

	mu       sync.Mutex
	requests []string         // "path range" of every file request, answered or not
	served   int              // file requests answered with content
	gate     chan struct{}    // while not nil, file requests wait until it is closed (Hold, Release)
	held     chan string      // announces each file request that waits at the gate
	cutOnce  map[string]int64 // break the connection after this many bytes, once
	corrupt  map[string]int   // serve a flipped byte this many times
	missing  map[string]bool  // listed but answered 404
}

// CutOnce makes the next download of path break the connection after n body bytes, like a
// dropped network.
func (h *Hub) CutOnce(path string, n int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cutOnce[path] = n
}

// Corrupt makes the next times downloads of path arrive with one byte flipped.
func (h *Hub) Corrupt(path string, times int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.corrupt[path] = times
}

// Missing lists path (10 bytes, a made-up git id) and answers its download with 404.
func (h *Hub) Missing(path string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.missing[path] = true
}

// RequestsFor is every file request for path so far, as "path range" (range "" when whole).
func (h *Hub) RequestsFor(path string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.requests {
		if strings.HasPrefix(r, path+" ") {
			out = append(out, r)
		}
	}
	return out
}

// File is the content the hub serves at path, and whether it serves that path.
func (h *Hub) File(path string) ([]byte, bool) {
	b, ok := h.files[path]
	return b, ok
}

// Paths are the files the hub serves (not the Missing ones), in no order.
func (h *Hub) Paths() []string {
	out := make([]string, 0, len(h.files))
	for p := range h.files {
		out = append(out, p)
	}
	return out
}

// IsLFS is whether the listing describes path with a sha256 (weights, large files) rather than a
// git blob id.
func (h *Hub) IsLFS(path string) bool { return isLFS(path, h.files[path]) }

// Hold makes file downloads wait (until Release, or until the client gives up) and returns a
// channel on which each waiting request's path is announced, so a test can act while a download
// is certainly under way.
func (h *Hub) Hold() <-chan string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gate = make(chan struct{})
	h.held = make(chan string, 64)
	return h.held
}

// Release lets held and later file downloads proceed.
func (h *Hub) Release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gate != nil {
		close(h.gate)
		h.gate = nil
	}
}

// NewHub serves the files under dir (and extra, path → content, added on top) as repository repo.
func NewHub(dir, repo string, extra map[string][]byte) (*Hub, error) {
	h := &Hub{Repo: repo, files: map[string][]byte{}, cutOnce: map[string]int64{}, corrupt: map[string]int{}, missing: map[string]bool{}}
	if dir != "" {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			h.files[filepath.ToSlash(rel)] = b
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("downloadtest: reading %s: %v", dir, err)
		}
	}
	for p, b := range extra {
		h.files[p] = b
	}
	return h, nil
}

// Start serves the hub on 127.0.0.1 and returns a Remote pointing at it and a function that
// stops the server.
func (h *Hub) Start() (*download.Remote, func()) {
	srv := httptest.NewServer(h)
	return &download.Remote{BaseURL: srv.URL, Repo: h.Repo, Client: srv.Client()}, srv.Close
}

// TotalBytes is the size of every file the hub serves.
func (h *Hub) TotalBytes() int64 {
	var n int64
	for _, b := range h.files {
		n += int64(len(b))
	}
	return n
}

// FileRequests is how many file downloads (whole or ranged) the hub has served.
func (h *Hub) FileRequests() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.served
}

// isLFS is whether a file is described with a sha256 (weights, large files) or a git blob id.
func isLFS(p string, b []byte) bool {
	return strings.HasSuffix(p, ".safetensors") || len(b) > 1<<20
}

// ServeHTTP answers the hub's tree listing and file downloads.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	listPath := "/api/models/" + h.Repo + "/tree/main"
	filePrefix := "/" + h.Repo + "/resolve/main/"
	switch {
	case r.URL.Path == listPath:
		var entries []map[string]any
		for p, b := range h.files {
			e := map[string]any{"type": "file", "path": p, "size": len(b)}
			if isLFS(p, b) {
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
		h.mu.Lock()
		for p := range h.missing {
			entries = append(entries, map[string]any{"type": "file", "path": p, "size": 10, "oid": "00"})
		}
		h.mu.Unlock()
		// The hub lists folders too; clients skip them.
		dirs := map[string]bool{}
		for p := range h.files {
			if d, _, ok := strings.Cut(p, "/"); ok && !dirs[d] {
				dirs[d] = true
				entries = append(entries, map[string]any{"type": "directory", "path": d, "size": 0})
			}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(entries)
	case strings.HasPrefix(r.URL.Path, filePrefix):
		p := strings.TrimPrefix(r.URL.Path, filePrefix)
		h.mu.Lock()
		h.requests = append(h.requests, p+" "+r.Header.Get("Range"))
		b, ok := h.files[p]
		if !ok || h.missing[p] {
			h.mu.Unlock()
			http.NotFound(w, r)
			return
		}
		h.served++
		gate, held := h.gate, h.held
		cut, doCut := h.cutOnce[p]
		delete(h.cutOnce, p)
		if h.corrupt[p] > 0 {
			h.corrupt[p]--
			b = append([]byte(nil), b...)
			b[len(b)/2] ^= 0xff
		}
		h.mu.Unlock()
		if doCut {
			w = &cuttingWriter{ResponseWriter: w, left: cut}
		}
		if gate != nil {
			select {
			case held <- p:
			default:
			}
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
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
		c.ResponseWriter.Write(p[:c.left])
		c.left = 0
		if f, ok := c.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		panic(http.ErrAbortHandler)
	}
	c.left -= int64(len(p))
	return c.ResponseWriter.Write(p)
}
