// Package comfy is ComfyUI's HTTP routes on easel serve, for the clients that send one fixed
// workflow with their values patched in (Open WebUI's ComfyUI engine, SillyTavern's ComfyUI
// source, mobile clients): POST /prompt takes an API-format workflow and answers a prompt_id at
// once; the workflow runs on the server's queue (render.Renderer), its progress goes out over the
// /ws websocket as ComfyUI's messages, and its pictures come back through /history and /view.
// Every route also answers under /api, as ComfyUI's do.
//
// The workflows understood are ComfyUI's default text-to-image graph and its Qwen-Image
// template: loaders, CLIPTextEncode for the positive and negative prompts, KSampler or
// KSamplerAdvanced, an empty latent (or LoadImage + VAEEncode to start from an image),
// VAEDecode and SaveImage/PreviewImage, values read through links as ComfyUI reads them
// (graph.go). Any other node type is refused, named, with ComfyUI's 400 and node_errors.
package comfy

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"

	"easel/app"
	"easel/app/serve/render"
)

// Options are the routes' limits.
type Options struct {
	MaxBody    int64 // bytes of one request body
	MaxPending int   // workflows waiting before 503
}

// API answers the routes over a Renderer. Make it with New.
type API struct {
	r   render.Renderer
	opt Options
	hub *hub
	q   *queue

	upMu    sync.Mutex
	uploads map[string][]byte // name → the file as uploaded
	upOrder []string
	upBytes int
}

// How many uploaded images are kept, and their bytes in all (the oldest go first).
const (
	maxUploads     = 64
	maxUploadBytes = 256 << 20
)

// New makes the API over r and starts its worker.
func New(r render.Renderer, opt Options) *API {
	if opt.MaxBody <= 0 {
		opt.MaxBody = 256 << 20
	}
	if opt.MaxPending <= 0 {
		opt.MaxPending = 32
	}
	a := &API{r: r, opt: opt, hub: newHub(), uploads: map[string][]byte{}}
	a.q = newQueue(a)
	return a
}

// Close stops the worker and the websockets.
func (a *API) Close() {
	a.hub.close()
	a.q.close()
}

// Register adds the routes to mux, each also under /api.
func (a *API) Register(mux *http.ServeMux) {
	routes := map[string]map[string]http.HandlerFunc{}
	var order []string
	route := func(method, p string, h http.HandlerFunc) {
		if routes[p] == nil {
			routes[p] = map[string]http.HandlerFunc{}
			order = append(order, p)
		}
		routes[p][method] = h
	}
	route(http.MethodPost, "/prompt", a.postPrompt)
	route(http.MethodGet, "/prompt", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, a.q.status()) })
	route(http.MethodGet, "/history", a.getHistory)
	route(http.MethodGet, "/history/{id}", a.getHistory)
	route(http.MethodGet, "/view", a.view)
	route(http.MethodGet, "/queue", a.getQueue)
	route(http.MethodPost, "/queue", a.postQueue)
	route(http.MethodPost, "/interrupt", func(w http.ResponseWriter, r *http.Request) { a.q.interrupt(); w.WriteHeader(http.StatusOK) })
	route(http.MethodGet, "/object_info", a.objectInfo)
	route(http.MethodGet, "/object_info/{class}", a.objectInfo)
	route(http.MethodGet, "/system_stats", a.systemStats)
	route(http.MethodPost, "/upload/image", a.upload)
	route(http.MethodGet, "/ws", func(w http.ResponseWriter, r *http.Request) { a.hub.serve(w, r, func() any { return a.q.status() }) })
	for _, p := range order {
		byMethod := routes[p]
		var allow []string
		for m := range byMethod {
			allow = append(allow, m)
		}
		sort.Strings(allow)
		h := func(w http.ResponseWriter, r *http.Request) {
			m := r.Method
			if m == http.MethodHead {
				m = http.MethodGet
			}
			if f, ok := byMethod[m]; ok {
				f(w, r)
				return
			}
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"error": fmt.Sprintf("%s %s is not served: use %s", r.Method, r.URL.Path, strings.Join(allow, " or "))})
		}
		mux.HandleFunc(p, h)
		mux.HandleFunc("/api"+p, h)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// readBody reads a body under the cap (false: answered 413/400).
func (a *API) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.opt.MaxBody))
	if err != nil {
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": fmt.Sprintf("the body could not be read or is larger than %d MB: %v", a.opt.MaxBody>>20, err)})
		return nil, false
	}
	return b, true
}

// postPrompt answers POST /prompt: the workflow checked and queued → {prompt_id, number,
// node_errors}; a workflow Easel cannot run → 400 {error, node_errors} naming why.
func (a *API) postPrompt(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readBody(w, r)
	if !ok {
		return
	}
	var req struct {
		Prompt   json.RawMessage `json:"prompt"`
		ClientID string          `json:"client_id"`
		Extra    map[string]any  `json:"extra_data"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": promptError("invalid_prompt", "the body is not JSON: "+err.Error()), "node_errors": map[string]any{}})
		return
	}
	if len(req.Prompt) == 0 || string(req.Prompt) == "null" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": promptError("no_prompt", "no prompt: send {\"prompt\": WORKFLOW, \"client_id\": ID}"), "node_errors": []any{}})
		return
	}
	outs, nerrs, msg := parseGraph(req.Prompt, a.uploaded, a.isModel)
	if msg != "" {
		kind := "prompt_outputs_failed_validation"
		if len(nerrs) > 0 && nerrs[0].kind == "invalid_prompt" || len(nerrs) == 0 {
			kind = "invalid_prompt"
		}
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": promptError(kind, msg), "node_errors": nodeErrors(nerrs)})
		return
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	for i, o := range outs {
		outs[i].req.Origin = host
		for _, t := range []string{o.req.Prompt, o.req.Negative} {
			if n := len([]rune(t)); n > render.MaxPromptChars {
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": promptError("prompt_too_long",
					fmt.Sprintf("a CLIPTextEncode text is %d characters: this server takes at most %d; shorten it", n, render.MaxPromptChars)), "node_errors": map[string]any{}})
				return
			}
		}
	}
	if req.Extra == nil {
		req.Extra = map[string]any{}
	}
	if req.ClientID != "" {
		req.Extra["client_id"] = req.ClientID
	}
	t := &task{id: newID(), prompt: req.Prompt, extra: req.Extra, outputs: outs, clientID: req.ClientID}
	if !a.q.add(t, a.opt.MaxPending) {
		w.Header().Set("Retry-After", "30")
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": promptError("queue_full", fmt.Sprintf("%d workflows are waiting: try again later", a.opt.MaxPending)), "node_errors": map[string]any{}})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"prompt_id": t.id, "number": t.number, "node_errors": map[string]any{}})
}

// promptError is ComfyUI's error object.
func promptError(kind, msg string) map[string]any {
	return map[string]any{"type": kind, "message": msg, "details": "", "extra_info": map[string]any{}}
}

// nodeErrors is ComfyUI's node_errors: per node, its errors and class.
func nodeErrors(errs []nodeError) map[string]any {
	out := map[string]any{}
	for _, e := range errs {
		ne, _ := out[e.id].(map[string]any)
		if ne == nil {
			ne = map[string]any{"errors": []any{}, "dependent_outputs": []string{}, "class_type": e.class}
			out[e.id] = ne
		}
		ne["errors"] = append(ne["errors"].([]any), map[string]any{"type": e.kind, "message": e.msg, "details": e.input,
			"extra_info": map[string]any{"input_name": e.input}})
	}
	return out
}

// isModel reports whether a loader's name is a model of the server's folder.
func (a *API) isModel(name string) bool {
	for _, n := range a.r.Model().Names {
		if name == n || name == strings.TrimSuffix(n, path.Ext(n)) {
			return true
		}
	}
	return false
}

// getHistory answers GET /history (max_items) and /history/{id}.
func (a *API) getHistory(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	a.q.mu.Lock()
	out := map[string]any{}
	ids := a.q.order
	if id != "" {
		ids = nil
		if _, ok := a.q.history[id]; ok {
			ids = []string{id}
		}
	}
	if n := r.URL.Query().Get("max_items"); n != "" && id == "" {
		var k int
		fmt.Sscan(n, &k)
		if k >= 0 && k < len(ids) {
			ids = ids[len(ids)-k:]
		}
	}
	for _, i := range ids {
		e := a.q.history[i]
		out[i] = map[string]any{"prompt": e.task.item(), "outputs": e.outputs, "status": e.status, "meta": map[string]any{}}
	}
	a.q.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// view answers GET /view?filename&subfolder&type: a picture made (output, temp) or uploaded
// (input), by name among those kept, never a path.
func (a *API) view(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name, typ := q.Get("filename"), q.Get("type")
	if typ == "" {
		typ = "output"
	}
	if name == "" || strings.ContainsAny(name, "/\\") || strings.Contains(name, "..") || q.Get("subfolder") != "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "give the filename (and type) /history lists, with an empty subfolder"})
		return
	}
	var data []byte
	switch typ {
	case "output", "temp":
		a.q.mu.Lock()
		data = a.q.images[typ+"/"+name]
		a.q.mu.Unlock()
	case "input":
		data, _ = a.uploaded(name)
	}
	if data == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": fmt.Sprintf("%s (%s) is not kept here: the server keeps the last %d workflows' pictures", name, typ, maxHistory)})
		return
	}
	w.Header().Set("Content-Type", http.DetectContentType(data))
	w.Header().Set("Content-Disposition", fmt.Sprintf("filename=%q", name))
	w.Write(data)
}

// getQueue answers GET /queue.
func (a *API) getQueue(w http.ResponseWriter, r *http.Request) {
	a.q.mu.Lock()
	running, pending := []any{}, []any{}
	if t := a.q.running; t != nil {
		running = append(running, t.item())
	}
	for _, t := range a.q.pending {
		pending = append(pending, t.item())
	}
	a.q.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"queue_running": running, "queue_pending": pending})
}

// postQueue answers POST /queue: {"clear": true} drops the waiting workflows, {"delete": [ids]}
// the ones named (the running one is stopped with /interrupt).
func (a *API) postQueue(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readBody(w, r)
	if !ok {
		return
	}
	var req struct {
		Clear  bool     `json:"clear"`
		Delete []string `json:"delete"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "send {\"clear\": true} or {\"delete\": [prompt ids]}: " + err.Error()})
		return
	}
	a.q.drop(req.Clear, req.Delete)
	w.WriteHeader(http.StatusOK)
}

// systemStats answers GET /system_stats in ComfyUI's shape (clients check it to connect).
func (a *API) systemStats(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"system": map[string]any{"os": runtime.GOOS, "ram_total": 0, "ram_free": 0, "comfyui_version": "easel " + app.Version,
			"python_version": "", "pytorch_version": "", "embedded_python": false, "argv": []string{"easel", "serve"}},
		"devices": []any{map[string]any{"name": "easel", "type": "cpu", "index": 0, "vram_total": 0, "vram_free": 0, "torch_vram_total": 0, "torch_vram_free": 0}},
	})
}

// upload answers POST /upload/image (multipart "image"): kept in memory for LoadImage.
func (a *API) upload(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, a.opt.MaxBody)
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "send the image as multipart/form-data, field \"image\": " + err.Error()})
		return
	}
	defer r.MultipartForm.RemoveAll()
	fhs := r.MultipartForm.File["image"]
	if len(fhs) == 0 || fhs[0].Filename == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "no image: send the file in the field \"image\""})
		return
	}
	f, err := fhs[0].Open()
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
		return
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
		return
	}
	name := path.Base(strings.ReplaceAll(fhs[0].Filename, "\\", "/"))
	if name == "." || name == "/" || name == ".." {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "the image needs a file name"})
		return
	}
	a.upMu.Lock()
	if old, ok := a.uploads[name]; ok {
		a.upBytes -= len(old)
	} else {
		a.upOrder = append(a.upOrder, name)
	}
	a.uploads[name] = data
	a.upBytes += len(data)
	for len(a.upOrder) > 1 && (len(a.upOrder) > maxUploads || a.upBytes > maxUploadBytes) {
		a.upBytes -= len(a.uploads[a.upOrder[0]])
		delete(a.uploads, a.upOrder[0])
		a.upOrder = a.upOrder[1:]
	}
	a.upMu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"name": name, "subfolder": "", "type": "input"})
}

// uploaded is an uploaded image by name.
func (a *API) uploaded(name string) ([]byte, bool) {
	a.upMu.Lock()
	defer a.upMu.Unlock()
	d, ok := a.uploads[name]
	return d, ok
}
