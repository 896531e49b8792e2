package serve

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
)

// routes is the API: every route behind the credentials check.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	handle := func(method, path string, h http.HandlerFunc) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			if r.Method != method && !(method == http.MethodGet && r.Method == http.MethodHead) {
				w.Header().Set("Allow", method)
				writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"detail": "Method Not Allowed"})
				return
			}
			h(w, r)
		})
	}
	handle(http.MethodPost, "/sdapi/v1/txt2img", s.txt2img)
	handle(http.MethodPost, "/sdapi/v1/img2img", s.img2img)
	handle(http.MethodGet, "/sdapi/v1/progress", s.progress)
	handle(http.MethodPost, "/sdapi/v1/interrupt", s.interrupt)
	handle(http.MethodPost, "/sdapi/v1/skip", s.skip)
	mux.HandleFunc("/sdapi/v1/options", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			s.getOptions(w, r)
		case http.MethodPost:
			s.setOptions(w, r)
		default:
			w.Header().Set("Allow", "GET, POST")
			writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"detail": "Method Not Allowed"})
		}
	})
	handle(http.MethodGet, "/sdapi/v1/sd-models", s.sdModels)
	handle(http.MethodPost, "/sdapi/v1/refresh-checkpoints", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, nil) })
	handle(http.MethodGet, "/sdapi/v1/loras", s.loras)
	handle(http.MethodPost, "/sdapi/v1/refresh-loras", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, nil) })
	handle(http.MethodGet, "/sdapi/v1/samplers", s.samplers)
	handle(http.MethodGet, "/sdapi/v1/schedulers", s.schedulers)
	handle(http.MethodGet, "/sdapi/v1/memory", s.memory)
	handle(http.MethodGet, "/sdapi/v1/cmd-flags", s.cmdFlags)
	handle(http.MethodPost, "/sdapi/v1/png-info", s.pngInfo)
	s.a1111Routes(handle)
	handle(http.MethodPost, "/sdapi/v1/interrogate", s.interrogate)
	handle(http.MethodGet, "/{$}", s.root) // apps that check the server is there (SDAI)
	public := s.otherAPIs(mux)             // apis.go: the OpenAI images API, ComfyUI's routes
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Not Found"})
	})
	guarded := oneTrailingSlash(s.cfg.Auth.requireAuth(mux))
	return s.logRefusals(s.cfg.CORS.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, pattern := public.Handler(r); pattern != "" {
			h.ServeHTTP(w, r) // capability URLs that expire (the OpenAI API's response_format "url")
			return
		}
		guarded.ServeHTTP(w, r)
	})))
}

// root answers GET /: A1111 serves its web page there, and apps check it answers before they
// call the API.
func (s *Server) root(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, rootPage)
}

const rootPage = `<!doctype html><meta charset="utf-8"><title>Easel</title>
<p>Easel serves its APIs here: AUTOMATIC1111's at <code>/sdapi/v1/</code> (Easel's docs/A1111-API.md lists the routes),
OpenAI's images API at <code>/v1/images/generations</code> and <code>/v1/images/edits</code>, and ComfyUI's routes
(<code>/prompt</code>, <code>/history</code>, <code>/view</code>, <code>/ws</code>) for clients that send a workflow.</p>
`

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// unprocessable answers 422 with FastAPI's body.
func unprocessable(w http.ResponseWriter, detail []detailItem) {
	for i := range detail {
		detail[i].Msg = noPaths(detail[i].Msg)
	}
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": detail})
}

// serverError answers 500 as A1111's API exception handler does.
func serverError(w http.ResponseWriter, kind string, err error) {
	writeJSON(w, http.StatusInternalServerError, map[string]any{"error": kind, "detail": "", "body": "", "errors": noPaths(err.Error())})
}

// busy answers 503 with Retry-After (the queue is full or closing).
func busy(w http.ResponseWriter, after int, msg string) {
	w.Header().Set("Retry-After", itoa(after))
	writeJSON(w, http.StatusServiceUnavailable, map[string]any{"detail": noPaths(msg)})
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// clientHost is the request's remote host, for the queue's origin and the log.
func clientHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return strings.TrimSpace(r.RemoteAddr)
	}
	return host
}
