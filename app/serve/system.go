package serve

import (
	"net/http"
	"runtime"

	"easel/app/memplan"
)

// memory answers GET /sdapi/v1/memory: the process's memory (A1111's ram) and, for `cuda`, the
// error A1111 gives on a machine without CUDA.
func (s *Server) memory(w http.ResponseWriter, r *http.Request) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	total := memplan.PhysicalMemory()
	used := int64(ms.Sys)
	ram := map[string]any{"used": used, "total": total, "free": max(total-used, 0)}
	writeJSON(w, http.StatusOK, map[string]any{"ram": ram, "cuda": map[string]any{"error": "Easel does not use CUDA (it runs on Metal or the CPU)"}})
}

// cmdFlags answers GET /sdapi/v1/cmd-flags: the command line the server was started with,
// credentials left out.
func (s *Server) cmdFlags(w http.ResponseWriter, r *http.Request) {
	out := map[string]any{}
	for k, v := range s.cfg.Flags {
		if str, ok := v.(string); ok {
			v = noPaths(str)
		}
		out[k] = v
	}
	out["api"] = true
	out["api_auth"] = nil
	if s.cfg.Auth.Set() {
		out["api_auth"] = "(set)"
	}
	out["api_log"] = s.cfg.LogPrompts
	writeJSON(w, http.StatusOK, out)
}
