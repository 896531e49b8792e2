package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
)

// getOptions answers GET /sdapi/v1/options: the options A1111 clients read, with Easel's values.
func (s *Server) getOptions(w http.ResponseWriter, r *http.Request) {
	name, path, _ := s.models.current()
	sum := s.hashes.lookup(path)
	opts := map[string]any{}
	for k, v := range s.options.all() { // what clients posted comes back, as A1111 keeps it
		opts[k] = v
	}
	for k, v := range map[string]any{
		"sd_model_checkpoint":         modelTitle(name, sum),
		"sd_checkpoint_hash":          orNil(sum),
		"sd_vae":                      "Automatic",
		"samples_format":              "png",
		"CLIP_stop_at_last_layers":    1,
		"live_previews_enable":        s.cfg.Preview != nil,
		"live_previews_image_format":  "png",
		"show_progress_every_n_steps": 1,
		"show_progress_type":          "Approx cheap",
		"enable_pnginfo":              true,
	} {
		if _, posted := opts[k]; !posted || k == "sd_model_checkpoint" || k == "sd_checkpoint_hash" {
			opts[k] = v
		}
	}
	writeJSON(w, http.StatusOK, opts)
}

// setOptions answers POST /sdapi/v1/options: sd_model_checkpoint switches among the model
// folder's models, by name; other options are accepted and left as they are (A1111 ignores the
// ones it does not know). An unknown model is A1111's 500 with the reason.
func (s *Server) setOptions(w http.ResponseWriter, r *http.Request) {
	f := s.readRequest(w, r)
	if f == nil {
		return
	}
	if raw, ok := f.raw("sd_model_checkpoint"); ok {
		var name string
		if err := json.Unmarshal(raw, &name); err != nil {
			unprocessable(w, []detailItem{{Loc: []any{"body", "sd_model_checkpoint"}, Msg: "str type expected", Type: "type_error.str"}})
			return
		}
		if err := s.models.choose(name); err != nil {
			serverError(w, "RuntimeError", err)
			return
		}
		s.cfg.Log.Printf("options from %s: model %s", clientHost(r), name)
	}
	if !s.options.keep(f.m) {
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"detail": fmt.Sprintf("this server keeps at most %d options of %d KB in all: send only the options you change", maxOptions, maxOptionBytes>>10)})
		return
	}
	writeJSON(w, http.StatusOK, nil)
}

// The most options a server keeps, and their bytes in all (a client posts A1111's whole dict of
// a few hundred back).
const (
	maxOptions     = 2000
	maxOptionBytes = 1 << 20
)

// postedOptions are the options clients posted (other than the model, which switches), answered
// back by GET /options as A1111 answers what it stored; Easel itself uses none of them.
type postedOptions struct {
	mu    sync.Mutex
	m     map[string]json.RawMessage
	bytes int
}

func newPostedOptions() *postedOptions { return &postedOptions{m: map[string]json.RawMessage{}} }

// keep stores the posted options; false (nothing stored) when they would pass the caps.
func (o *postedOptions) keep(posted map[string]json.RawMessage) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	n, size := len(o.m), o.bytes
	for k, v := range posted {
		if old, ok := o.m[k]; ok {
			size -= len(k) + len(old)
		} else {
			n++
		}
		size += len(k) + len(v)
	}
	if n > maxOptions || size > maxOptionBytes {
		return false
	}
	for k, v := range posted {
		if k != "sd_model_checkpoint" {
			o.m[k] = v
		}
	}
	o.bytes = size
	return true
}

// all is a copy of the stored options.
func (o *postedOptions) all() map[string]json.RawMessage {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make(map[string]json.RawMessage, len(o.m))
	for k, v := range o.m {
		out[k] = v
	}
	return out
}
