package openai

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"time"
)

// filesPath is where response_format "url" images are served.
const filesPath = "/v1/images/files/"

// How long an image URL works, and how much the store keeps (the oldest go first).
const (
	fileLifetime = time.Hour
	maxFiles     = 256
	maxFileBytes = 512 << 20
)

// fileStore keeps the images answered as URLs, in memory, each under a random 128-bit name (a
// capability URL, as OpenAI's signed URLs: fetched without credentials, by those given it) until
// it expires.
type fileStore struct {
	mu    sync.Mutex
	files map[string]storedFile
	order []string
	bytes int
}

type storedFile struct {
	data    []byte
	mime    string
	expires time.Time
}

func newFileStore() *fileStore { return &fileStore{files: map[string]storedFile{}} }

var mimeOf = map[string]string{"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}

// put stores data and returns its absolute URL on the server the request came to.
func (s *fileStore) put(r *http.Request, data []byte, format string) string {
	var b [16]byte
	rand.Read(b[:])
	name := hex.EncodeToString(b[:]) + "." + format
	s.mu.Lock()
	s.expire(time.Now())
	for len(s.order) > 0 && (len(s.order) >= maxFiles || s.bytes+len(data) > maxFileBytes) {
		s.drop(s.order[0])
	}
	s.files[name] = storedFile{data: data, mime: mimeOf[format], expires: time.Now().Add(fileLifetime)}
	s.order = append(s.order, name)
	s.bytes += len(data)
	s.mu.Unlock()
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + filesPath + name
}

// expire drops what expired by now; s.mu is held.
func (s *fileStore) expire(now time.Time) {
	for len(s.order) > 0 && now.After(s.files[s.order[0]].expires) {
		s.drop(s.order[0])
	}
}

// drop removes a stored file; s.mu is held.
func (s *fileStore) drop(name string) {
	s.bytes -= len(s.files[name].data)
	delete(s.files, name)
	for i, n := range s.order {
		if n == name {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

// serve answers GET /v1/images/files/NAME.
func (s *fileStore) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		WriteError(w, http.StatusMethodNotAllowed, "image URLs are fetched with GET", "invalid_request_error", "", "method_not_allowed")
		return
	}
	name := strings.TrimPrefix(r.URL.Path, filesPath)
	s.mu.Lock()
	s.expire(time.Now())
	f, ok := s.files[name]
	s.mu.Unlock()
	if !ok {
		WriteError(w, http.StatusNotFound, "this image URL has expired or never existed: image URLs work for an hour; ask for the image again", "invalid_request_error", "", "not_found")
		return
	}
	w.Header().Set("Content-Type", f.mime)
	w.Header().Set("Cache-Control", "private, max-age=3600")
	w.Write(f.data)
}

// clear drops every stored image.
func (s *fileStore) clear() {
	s.mu.Lock()
	s.files, s.order, s.bytes = map[string]storedFile{}, nil, 0
	s.mu.Unlock()
}
