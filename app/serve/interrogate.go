package serve

import (
	"errors"
	"net/http"
	"sync"

	"easel/app/textgen"
	"easel/engine/imageio"
)

// POST /sdapi/v1/interrogate {"image": base64 or data URL, "model": "clip"|"deepdanbooru"|…} →
// {"caption": "…"}: A1111's Interrogate, answered by Describe (app/textgen) with the current
// model's own text encoder, whatever "model" names, so the tools that call it work unchanged. It
// runs on the CPU beside the generation queue, one request at a time, greedily (the same image
// gets the same caption).

// interrogator is a server's Describe writer over its current model file, opened at the first
// request and again when the model changes.
type interrogator struct {
	mu        sync.Mutex
	path      string
	closeFile func() error
	w         *textgen.Writer
}

// interrogators holds each Server's interrogator (kept here so the Server itself is unchanged).
var interrogators sync.Map // *Server → *interrogator

// interrogateMaxTokens bounds a caption.
const interrogateMaxTokens = 200

func (s *Server) interrogate(w http.ResponseWriter, r *http.Request) {
	f := s.readRequest(w, r)
	if f == nil {
		return
	}
	img := f.Str("image", "")
	model := f.Str("model", "clip") // A1111's two: both answered by Describe
	if len(f.errs) > 0 {
		unprocessable(w, f.errs)
		return
	}
	if model != "clip" && model != "deepdanbooru" {
		writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Model not found: interrogate takes the model \"clip\" or \"deepdanbooru\""}) // A1111s 404
		return
	}
	data, ok := requiredImage(w, img)
	if !ok {
		return
	}
	pic, err := imageio.Decode(data, "the image")
	if err != nil {
		unprocessable(w, []detailItem{{Loc: []any{"body", "image"}, Msg: err.Error(), Type: "value_error"}})
		return
	}
	v, _ := interrogators.LoadOrStore(s, &interrogator{})
	it := v.(*interrogator)
	it.mu.Lock()
	defer it.mu.Unlock()
	_, path, _ := s.models.current()
	if err := it.open(path); err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, textgen.ErrNoHead) {
			status = http.StatusNotImplemented
		}
		writeJSON(w, status, map[string]any{"detail": err.Error()})
		return
	}
	res, err := it.w.Describe(r.Context(), pic, "", textgen.Options{MaxTokens: interrogateMaxTokens})
	switch {
	case r.Context().Err() != nil:
		return // the client went away
	case errors.Is(err, textgen.ErrBadImage):
		unprocessable(w, []detailItem{{Loc: []any{"body", "image"}, Msg: err.Error(), Type: "value_error"}})
		return
	case err != nil:
		serverError(w, "InterrogateError", err)
		return
	}
	s.cfg.Log.Printf("interrogate from %s: %d tokens", clientHost(r), res.Tokens)
	writeJSON(w, http.StatusOK, map[string]any{"caption": res.Text})
}

// open binds the writer to the model file at path (again when it changed).
func (it *interrogator) open(path string) error {
	if it.w != nil && it.path == path {
		return nil
	}
	if it.closeFile != nil {
		it.closeFile()
		it.closeFile, it.w = nil, nil
	}
	w, closeFile, err := textgen.OpenFile(path)
	if err != nil {
		return err
	}
	it.path, it.w, it.closeFile = path, w, closeFile
	return nil
}
