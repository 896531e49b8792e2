package serve

import (
	"net/http"
)

// sdModels answers GET /sdapi/v1/sd-models: the model folder's .cmf files, by name (no paths).
func (s *Server) sdModels(w http.ResponseWriter, r *http.Request) {
	out := []map[string]any{}
	for _, n := range s.models.list() {
		out = append(out, map[string]any{"title": n, "model_name": stem(n), "hash": nil, "sha256": nil, "filename": n, "config": nil})
	}
	writeJSON(w, http.StatusOK, out)
}

// loras answers GET /sdapi/v1/loras: the LoRA folder's files, by name.
func (s *Server) loras(w http.ResponseWriter, r *http.Request) {
	out := []map[string]any{}
	files := loraFiles(s.cfg.LoRADir)
	for _, n := range loraNames(s.cfg.LoRADir) {
		out = append(out, map[string]any{"name": n, "alias": n, "path": files[n], "metadata": map[string]any{}})
	}
	writeJSON(w, http.StatusOK, out)
}

// samplers answers GET /sdapi/v1/samplers: Easel has one, flow-matching Euler.
func (s *Server) samplers(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, []map[string]any{{"name": "Euler", "aliases": []string{"k_euler"}, "options": map[string]any{}}})
}

// schedulers answers GET /sdapi/v1/schedulers: the model's own flow-matching schedule.
func (s *Server) schedulers(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, []map[string]any{{"name": "automatic", "label": "Automatic", "aliases": nil, "default_rho": -1, "need_inner_model": false}})
}
