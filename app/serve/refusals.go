package serve

import (
	"bufio"
	"net"
	"net/http"
	"strings"
)

// logRefusals writes one log line for every request the server refuses (a 4xx or 5xx answer):
// the method, the route, the client, the status and the start of the answer's message, so an
// operator sees why a client's call failed without the client's own log.
func (s *Server) logRefusals(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.status >= 400 {
			msg := strings.Join(strings.Fields(string(rec.head)), " ")
			s.cfg.Log.Printf("refused %s %s from %s: %d %s", r.Method, r.URL.Path, clientHost(r), rec.status, msg)
		}
	})
}

// refusalHead is how much of a refusal's body the log keeps.
const refusalHead = 300

// statusRecorder notes the status and, for a refusal, the start of the body. It passes Flush and
// Hijack through (server-sent events, websockets).
type statusRecorder struct {
	http.ResponseWriter
	status int
	head   []byte
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.status >= 400 && len(r.head) < refusalHead {
		r.head = append(r.head, b[:min(len(b), refusalHead-len(r.head))]...)
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := r.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, http.ErrNotSupported
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
