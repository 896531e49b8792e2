// Package openai is OpenAI's images API on easel serve, for the clients written against it (Open
// WebUI, LibreChat, LobeChat, n8n, every program using the official openai SDKs pointed at
// another base URL): POST /v1/images/generations, POST /v1/images/edits (multipart), GET
// /v1/models, with OpenAI's field names, its streamed events and its error shape
// ({"error": {"message", "type", "param", "code"}}) for every refusal. Pictures come from the
// server's render.Renderer, so each equals `easel generate`'s with the same settings.
//
// Easel's extensions: seed, steps, guidance_scale and negative_prompt in a request; quality
// chooses the steps when steps is not given (quality.go); background "transparent" keeps the
// model's alpha channel, anything else answers RGB; easel_warnings in a response says what was
// not done as asked.
package openai

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"

	"easel/app/serve/render"
)

// Options are the API's limits.
type Options struct {
	MaxBody int64 // bytes of one request body
}

// API answers the routes over a Renderer. Make it with New.
type API struct {
	r     render.Renderer
	opt   Options
	files *fileStore
}

// New makes the API over r.
func New(r render.Renderer, opt Options) *API {
	if opt.MaxBody <= 0 {
		opt.MaxBody = 256 << 20
	}
	return &API{r: r, opt: opt, files: newFileStore()}
}

// Register adds the routes to mux (behind the server's credentials) and the expiring image URLs
// of response_format "url" to public (capability URLs: unguessable, kept an hour).
func (a *API) Register(mux, public *http.ServeMux) {
	route := func(method, path string, h http.HandlerFunc) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			if r.Method != method && !(method == http.MethodGet && r.Method == http.MethodHead) {
				w.Header().Set("Allow", method)
				WriteError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s is not served: use %s", r.Method, r.URL.Path, method), "invalid_request_error", "", "method_not_allowed")
				return
			}
			h(w, r)
		})
	}
	route(http.MethodPost, "/v1/images/generations", a.generations)
	route(http.MethodPost, "/v1/images/edits", a.edits)
	route(http.MethodGet, "/v1/models", a.models)
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, http.StatusNotFound, fmt.Sprintf("%s is not served here: Easel serves /v1/images/generations, /v1/images/edits and /v1/models", r.URL.Path), "invalid_request_error", "", "unknown_url")
	})
	public.HandleFunc(filesPath, a.files.serve)
}

// Close drops the stored images.
func (a *API) Close() { a.files.clear() }

// apiError is OpenAI's error body.
type apiError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// WriteError answers status with OpenAI's error shape (param and code null when "").
func WriteError(w http.ResponseWriter, status int, msg, typ, param, code string) {
	e := apiError{Message: msg, Type: typ}
	if param != "" {
		e.Param = &param
	}
	if code != "" {
		e.Code = &code
	}
	writeJSON(w, status, map[string]any{"error": e})
}

// invalid answers 400 invalid_request_error naming the parameter.
func invalid(w http.ResponseWriter, param, code, msg string) {
	WriteError(w, http.StatusBadRequest, msg, "invalid_request_error", param, code)
}

// renderError answers a Renderer's refusal.
func renderError(w http.ResponseWriter, err error) {
	re, _ := err.(*render.Error)
	if re == nil {
		WriteError(w, http.StatusInternalServerError, err.Error(), "server_error", "", "")
		return
	}
	status, typ, code := errorStatus(re)
	if re.Kind == render.ErrBusy {
		w.Header().Set("Retry-After", fmt.Sprint(max(re.RetryAfter, 1)))
	}
	WriteError(w, status, re.Msg, typ, re.Field, code)
}

// errorStatus is a refusal's status, type and code.
func errorStatus(re *render.Error) (int, string, string) {
	switch re.Kind {
	case render.ErrBadRequest:
		return http.StatusBadRequest, "invalid_request_error", "invalid_value"
	case render.ErrBusy:
		return http.StatusServiceUnavailable, "server_error", "server_busy"
	}
	return http.StatusInternalServerError, "server_error", "generation_failed"
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// models answers GET /v1/models: the models of the server's folder, by stem.
func (a *API) models(w http.ResponseWriter, r *http.Request) {
	m := a.r.Model()
	data := []map[string]any{}
	for _, n := range m.Names {
		data = append(data, map[string]any{"id": stem(n), "object": "model", "created": 0, "owned_by": "easel"})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func stem(name string) string {
	if i := strings.LastIndex(name, "."); i > 0 {
		return name[:i]
	}
	return name
}

// clientHost is the request's remote host.
func clientHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
