package serve

import (
	"errors"
	"net/http"
)

// readRequest reads a generation request's body under the cap and parses it as a JSON object;
// it answers the errors itself (413, 422) and returns nil then.
func (s *Server) readRequest(w http.ResponseWriter, r *http.Request) *fields {
	body, err := readBody(w, r, s.cfg.MaxBody)
	if errors.Is(err, errTooLarge) {
		tooLarge(w, s.cfg.MaxBody)
		return nil
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"detail": "the request body could not be read: " + err.Error()})
		return nil
	}
	f, bad := readObject(body)
	if bad != nil {
		unprocessable(w, bad)
		return nil
	}
	return f
}

// txt2img answers POST /sdapi/v1/txt2img.
func (s *Server) txt2img(w http.ResponseWriter, r *http.Request) {
	f := s.readRequest(w, r)
	if f == nil {
		return
	}
	p := s.readParams(f)
	s.readHires(f, p) // enable_hr (hires.go)
	if len(f.errs) > 0 {
		unprocessable(w, f.errs)
		return
	}
	s.generate(w, r, "txt2img", f, p, map[string]any{"denoising_strength": nil})
}
