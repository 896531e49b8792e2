package serve

import (
	"net/http"
)

// a1111Routes are the routes of A1111's API (modules/api/api.py) around generation that
// published clients call at startup to fill their menus: the kinds of things Easel has none of
// answer A1111's empty shape (a client loops over an empty list), the rest what Easel has.
// docs/A1111-API.md is the table of every route.
func (s *Server) a1111Routes(handle func(method, path string, h http.HandlerFunc)) {
	empty := func(v any) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, v) }
	}
	// Kinds of things Easel has none of: A1111's response models with nothing in them.
	for _, path := range []string{"/sdapi/v1/hypernetworks", "/sdapi/v1/face-restorers", "/sdapi/v1/realesrgan-models",
		"/sdapi/v1/prompt-styles", "/sdapi/v1/script-info", "/sdapi/v1/extensions", "/sdapi/v1/sd-modules"} {
		handle(http.MethodGet, path, empty([]any{}))
	}
	handle(http.MethodGet, "/sdapi/v1/embeddings", empty(map[string]any{"loaded": map[string]any{}, "skipped": map[string]any{}}))
	handle(http.MethodGet, "/sdapi/v1/scripts", empty(map[string]any{"txt2img": []string{}, "img2img": []string{}}))
	// The VAE is the model's own (one file holds every network): A1111's "Automatic" choice
	// is the only one, and it is not a file of its own.
	handle(http.MethodGet, "/sdapi/v1/sd-vae", empty([]any{}))
	// Easel upscales images, never latents.
	handle(http.MethodGet, "/sdapi/v1/latent-upscale-modes", empty([]any{}))
	handle(http.MethodGet, "/sdapi/v1/upscalers", s.upscalers)
	handle(http.MethodPost, "/sdapi/v1/extra-single-image", s.extraSingleImage)
	handle(http.MethodPost, "/sdapi/v1/extra-batch-images", s.extraBatchImages)
	// Refreshes: Easel lists its folders on every request, so there is nothing to refresh.
	for _, path := range []string{"/sdapi/v1/refresh-vae", "/sdapi/v1/refresh-embeddings"} {
		handle(http.MethodPost, path, empty(nil))
	}
	// The model is opened per job and its pages dropped between stages: unloading and
	// reloading have nothing to do, and A1111 answers {} to both.
	handle(http.MethodPost, "/sdapi/v1/unload-checkpoint", empty(map[string]any{}))
	handle(http.MethodPost, "/sdapi/v1/reload-checkpoint", empty(map[string]any{}))
}
