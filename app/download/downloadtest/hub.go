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
	requests int           // file requests served
	gate     chan struct{} // while not nil, file requests wait until it is closed (Hold, Release)
	held     chan string   // announces each file request that waits at the gate
}

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
	h := &Hub{Repo: repo, files: map[string][]byte{}}
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
	return h.requests
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
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(entries)
	case strings.HasPrefix(r.URL.Path, filePrefix):
		p := strings.TrimPrefix(r.URL.Path, filePrefix)
		b, ok := h.files[p]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h.mu.Lock()
		h.requests++
		gate, held := h.gate, h.held
		h.mu.Unlock()
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
