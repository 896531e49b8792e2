package serve

import (
	"fmt"
	"net/http"
	"path/filepath"
)

// sdModels answers GET /sdapi/v1/sd-models: the model folder's .cmf files, by name (no paths).
func (s *Server) sdModels(w http.ResponseWriter, r *http.Request) {
	out := []map[string]any{}
	for _, path := range s.modelPaths() {
		n := filepath.Base(path)
		sum := s.hashes.lookup(path)
		title := n
		if sum != "" {
			title = modelTitle(n, sum)
		}
		out = append(out, map[string]any{"title": title, "model_name": stem(n), "hash": shortHash(sum), "sha256": orNil(sum), "filename": n, "config": nil})
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

// modelTitle is A1111's checkpoint title, "NAME [short hash]" (the name alone while the hash is
// not known yet); sd_model_checkpoint is answered and taken in this form too.
func modelTitle(name, sum string) string {
	if len(sum) < 10 {
		return name
	}
	return fmt.Sprintf("%s [%s]", name, sum[:10])
}
