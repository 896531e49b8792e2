package serve

import (
	"encoding/json"
	"net/http"
)

// getOptions answers GET /sdapi/v1/options: the options A1111 clients read, with Easel's values.
func (s *Server) getOptions(w http.ResponseWriter, r *http.Request) {
	name, path, _ := s.models.current()
	sum := s.hashes.lookup(path)
	writeJSON(w, http.StatusOK, map[string]any{
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
	})
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
	writeJSON(w, http.StatusOK, nil)
}
