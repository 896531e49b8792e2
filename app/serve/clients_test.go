package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/serve"
)

// TestPublishedClientsReplayed replays, request for request, the startup sequence and one
// generation of six published A1111 clients of different kinds, as their published sources make
// them (each client's files are named where it is replayed), against a real server on a loopback
// listener over the tiny model; every call must answer with what the client then reads. Values
// a user chooses (size, steps) are small so the run stays short.
func TestPublishedClientsReplayed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	model := tinyModel(t)
	cors, err := serve.ParseCORS("http://127.0.0.1:3456", "")
	if err != nil {
		t.Fatal(err)
	}
	var saved atomic.Int32 // counted on the handlers' goroutines
	url, srv, _ := listening(t, &jobs.ModelGenerator{Path: model}, serve.Config{CORS: cors,
		Save: func(*image.NRGBA, *imagefile.Settings) error { saved.Add(1); return nil }})
	srv.WaitModelHashes(context.Background()) // known from startup (read in the background)
	for _, c := range []struct {
		name string
		run  func(c *client)
	}{
		{"open-webui (chat front end)", openWebUI},
		{"AIYA (Discord bot)", aiyaBot},
		{"Auto-Photoshop-SD (Photoshop plugin)", photoshopPlugin},
		{"openOutpaint (browser outpainting UI)", openOutpaint},
		{"webuiapi (Python library)", webuiapiPy},
		{"node-sd-webui (npm library)", nodeSDWebUI},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(&client{t: t, url: url}) })
	}
	if n := saved.Load(); n != 1 {
		t.Errorf("%d images saved: webuiapi's save_images true asked for one", n)
	}
}

// client sends a replayed client's requests.
type client struct {
	t      *testing.T
	url    string
	origin string            // a browser page's origin: every request carries it, non-simple ones are preflighted
	header map[string]string // sent with every request
}

// answer is one response.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into v, failing the test as the client would fail.
func (a answer) json(t *testing.T, what string, v any) {
	t.Helper()
	if err := json.Unmarshal(a.body, v); err != nil {
		t.Fatalf("%s: %d, body %.200q is not the JSON the client reads: %v", what, a.status, a.body, err)
	}
}

// do sends one request; a browser client's non-simple request is preceded by its preflight,
// which must allow it, and its answer must carry the allow header for the page to read it.
func (c *client) do(method, path string, body any) answer {
	c.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	if c.origin != "" && (method != "GET" && method != "HEAD" || body != nil) {
		pre, _ := http.NewRequest("OPTIONS", c.url+path, nil)
		pre.Header.Set("Origin", c.origin)
		pre.Header.Set("Access-Control-Request-Method", method)
		pre.Header.Set("Access-Control-Request-Headers", "content-type")
		resp, err := http.DefaultClient.Do(pre)
		if err != nil {
			c.t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != c.origin || !strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), method) {
			c.t.Fatalf("preflight of %s %s: %d %v", method, path, resp.StatusCode, resp.Header)
		}
	}
	req, err := http.NewRequest(method, c.url+path, r)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	if c.origin != "" {
		req.Header.Set("Origin", c.origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if c.origin != "" && resp.Header.Get("Access-Control-Allow-Origin") != c.origin {
		c.t.Errorf("%s %s: the page cannot read the answer (no Access-Control-Allow-Origin for %s)", method, path, c.origin)
	}
	return answer{resp.StatusCode, resp.Header, data}
}

// ok is do that requires a 200.
func (c *client) ok(method, path string, body any) answer {
	c.t.Helper()
	a := c.do(method, path, body)
	if a.status != 200 {
		c.t.Fatalf("%s %s: %d %.300s", method, path, a.status, a.body)
	}
	return a
}

// list requires a JSON list whose items have the keys the client reads.
func (c *client) list(path string, keys ...string) []map[string]any {
	c.t.Helper()
	var out []map[string]any
	c.ok("GET", path, nil).json(c.t, path, &out)
	if out == nil {
		c.t.Fatalf("GET %s: not a list", path)
	}
	for i, it := range out {
		for _, k := range keys {
			if _, ok := it[k]; !ok {
				c.t.Errorf("GET %s: item %d has no %q: %v", path, i, k, it)
			}
		}
	}
	return out
}

// generated is a txt2img/img2img answer as clients read it.
type generated struct {
	Images     []string       `json:"images"`
	Parameters map[string]any `json:"parameters"`
	Info       string         `json:"info"`
}

// generate posts a generation and requires images and an info JSON string.
func (c *client) generate(path string, body map[string]any) (generated, map[string]any, *image.NRGBA) {
	c.t.Helper()
	var g generated
	c.ok("POST", path, body).json(c.t, path, &g)
	var info map[string]any
	if err := json.Unmarshal([]byte(g.Info), &info); err != nil {
		c.t.Fatalf("%s: info %.200q is not JSON: %v", path, g.Info, err)
	}
	if len(g.Images) == 0 {
		c.t.Fatalf("%s: no images; info %s", path, g.Info)
	}
	img, _ := decodeImage(c.t, strings.TrimPrefix(g.Images[0], "data:image/png;base64,"))
	return g, info, img
}

// pngInfo posts an answer's image to /png-info and returns its info text.
func (c *client) pngInfo(b64 string) string {
	c.t.Helper()
	var pi map[string]any
	c.ok("POST", "/sdapi/v1/png-info", map[string]any{"image": "data:image/png;base64," + b64}).json(c.t, "png-info", &pi)
	info, _ := pi["info"].(string)
	if info == "" {
		c.t.Fatalf("png-info gave no info: %v", pi)
	}
	return info
}

// checkpoint is options' sd_model_checkpoint, which must be one of sd-models' titles.
func (c *client) checkpoint(models []map[string]any) string {
	c.t.Helper()
	var opts map[string]any
	c.ok("GET", "/sdapi/v1/options", nil).json(c.t, "options", &opts)
	cur, _ := opts["sd_model_checkpoint"].(string)
	for _, m := range models {
		if m["title"] == cur {
			return cur
		}
	}
	c.t.Fatalf("sd_model_checkpoint %q is none of sd-models' titles %v", cur, models)
	return ""
}

// openWebUI replays open-webui/open-webui backend/open_webui/routers/images.py (AUTOMATIC1111
// engine): the config check (GET options, raise_for_status, an empty authorization header),
// the model list (title → id, model_name → name), the current model, a model change (GET
// options, sd_model_checkpoint set, the whole dict POSTed back), and txt2img with
// {prompt, batch_size, width, height, steps, negative_prompt} and no cfg_scale, reading
// images (base64 or a data: URL) and info.
func openWebUI(c *client) {
	c.header = map[string]string{"authorization": ""}
	c.ok("GET", "/sdapi/v1/options", nil)
	models := c.list("/sdapi/v1/sd-models", "title", "model_name")
	cur := c.checkpoint(models)
	var opts map[string]any
	c.ok("GET", "/sdapi/v1/options", nil).json(c.t, "options", &opts)
	opts["sd_model_checkpoint"] = cur
	c.ok("POST", "/sdapi/v1/options", opts)
	_, info, img := c.generate("/sdapi/v1/txt2img", map[string]any{"prompt": "a lighthouse", "batch_size": 1, "width": 64, "height": 64, "steps": 1, "negative_prompt": "fog"})
	if img.Rect.Dx() != 64 || !strings.Contains(jsonText(info["warnings"]), "cfg_scale") {
		c.t.Errorf("open-webui's image %v; its negative prompt without cfg_scale must be said: %v", img.Rect, info["warnings"])
	}
}

// aiyaBot replays Kilvoctu/aiyabot core/settings.py (startup_check, authenticate_user,
// populate_global_vars) and core/stablecog.py (dream): cmd-flags (401 means api-auth, 404 "API is
// unreachable!"), HEAD /, POST /login, then samplers, prompt-styles, face-restorers, embeddings,
// hypernetworks, upscalers and sd-models looped over outside any try (name; name, prompt,
// negative_prompt; loaded/skipped .items(); filename, model_name, title, hash), GET /config whose
// .json() must parse; then POST options {sd_model_checkpoint: title}, txt2img with
// sampler_index, seed_resize_from_* 0, denoising_strength null, n_iter, styles, override_settings,
// and png-info for each image (info).
func aiyaBot(c *client) {
	if a := c.do("GET", "/sdapi/v1/cmd-flags", nil); a.status == 401 || a.status == 404 {
		c.t.Fatalf("cmd-flags: %d", a.status)
	}
	c.do("HEAD", "/", nil)
	c.do("POST", "/login", nil)
	c.list("/sdapi/v1/samplers", "name")
	c.list("/sdapi/v1/prompt-styles", "name", "prompt", "negative_prompt")
	c.list("/sdapi/v1/face-restorers", "name")
	var emb struct {
		Loaded  map[string]map[string]any `json:"loaded"`
		Skipped map[string]map[string]any `json:"skipped"`
	}
	c.ok("GET", "/sdapi/v1/embeddings", nil).json(c.t, "embeddings", &emb)
	if emb.Loaded == nil || emb.Skipped == nil {
		c.t.Errorf("embeddings without loaded/skipped: %+v", emb)
	}
	c.list("/sdapi/v1/hypernetworks", "name")
	c.list("/sdapi/v1/upscalers", "name")
	models := c.list("/sdapi/v1/sd-models", "filename", "model_name", "title", "hash")
	var cfg any
	c.do("GET", "/config", nil).json(c.t, "/config", &cfg)
	c.ok("POST", "/sdapi/v1/options", map[string]any{"sd_model_checkpoint": models[0]["title"]})
	g, _, _ := c.generate("/sdapi/v1/txt2img", map[string]any{"prompt": "a fox", "negative_prompt": "", "steps": 2, "width": 64, "height": 64,
		"cfg_scale": 7, "sampler_index": "Euler a", "seed": 21, "seed_resize_from_h": 0, "seed_resize_from_w": 0, "denoising_strength": nil,
		"n_iter": 1, "styles": []string{"None"}, "override_settings": map[string]any{"CLIP_stop_at_last_layers": 1}})
	for _, im := range g.Images {
		if info := c.pngInfo(im); !strings.Contains(info, "Seed: 21") {
			c.t.Errorf("png-info %q", info)
		}
	}
}

// photoshopPlugin replays AbdullahAlfaraj/Auto-Photoshop-StableDiffusion-Plugin: refreshUI
// (typescripts/sd_tab/util.ts; index.js checkAutoStatus): GET options, the extension's heartbeat
// (absent: the plugin alerts once and goes on), samplers, sd-models, loras, embeddings (.loaded),
// upscalers twice, POST options {inpainting_mask_weight: 1}, GET options; a generation from
// utility/session.js getSettings: img2img of the selection (600×600 in Photoshop: here 96×72,
// a multiple of 8 and not of 32) with seed as a string, sampler_index, mask_blur 4,
// alwayson_scripts {}, raw base64 init image; progress?skip_current_image=false (current_image);
// then each image to png-info, parsed for Seed (utility/sdapi/python_replacement.js). The
// image must be the selection's size, or Photoshop stretches it.
func photoshopPlugin(c *client) {
	c.ok("GET", "/sdapi/v1/options", nil)
	c.do("GET", "/sdapi/auto-photoshop-sd/heartbeat", nil)
	c.list("/sdapi/v1/samplers", "name")
	c.list("/sdapi/v1/sd-models", "title", "model_name")
	c.list("/sdapi/v1/loras", "name", "alias")
	var emb struct {
		Loaded map[string]any `json:"loaded"`
	}
	c.ok("GET", "/sdapi/v1/embeddings", nil).json(c.t, "embeddings", &emb)
	if emb.Loaded == nil {
		c.t.Error("embeddings.loaded is missing")
	}
	c.list("/sdapi/v1/upscalers", "name")
	c.list("/sdapi/v1/upscalers", "name")
	c.ok("POST", "/sdapi/v1/options", map[string]any{"inpainting_mask_weight": 1.0})
	c.ok("GET", "/sdapi/v1/options", nil)
	sel := image.NewNRGBA(image.Rect(0, 0, 96, 72))
	for i := range sel.Pix {
		sel.Pix[i] = uint8(i*13 + 7)
	}
	g, info, img := c.generate("/sdapi/v1/img2img", map[string]any{"prompt": "a teapot", "negative_prompt": "", "seed": "12345", "sampler_index": "Euler a",
		"width": 96, "height": 72, "steps": 2, "cfg_scale": 7, "denoising_strength": 0.7, "mask_blur": 4, "alwayson_scripts": map[string]any{},
		"init_images": []string{pngBase64(c.t, sel)}, "batch_size": 1, "n_iter": 1})
	if img.Rect.Dx() != 96 || img.Rect.Dy() != 72 || info["width"] != 96.0 || info["height"] != 72.0 {
		c.t.Errorf("the selection is 96×72; the image came back %v, info says %v×%v", img.Rect, info["width"], info["height"])
	}
	var p map[string]any
	c.ok("GET", "/sdapi/v1/progress?skip_current_image=false", nil).json(c.t, "progress", &p)
	if _, ok := p["current_image"]; !ok {
		c.t.Errorf("progress without current_image: %v", p)
	}
	if text := c.pngInfo(g.Images[0]); !strings.Contains(text, "Seed: 12345") || !strings.Contains(text, "Sampler: ") || !strings.Contains(text, "Size: 96x72") {
		c.t.Errorf("png-info %q", text)
	}
}

// openOutpaint replays zero01101/openOutpaint, a page served from another origin (its own
// server, here http://127.0.0.1:3456) that the server lets in with --cors-allow-origins: js/index.js
// checkConnection → GET options, getConfig (options), getStyles (js/prompt.js: prompt-styles),
// getSamplers (data[0].name), getUpscalers (data.length), getModels (title; options'
// sd_model_checkpoint), getSchedulers (label), js/extensions.js (scripts), getLoras; the model
// menu's POST /sdapi/v1/options/ (a trailing slash); js/ui/tool/dream.js: txt2img with seed as a
// string, sampler_index, mask "", init_images [], alwayson_scripts {} and extra keys, reading
// images and JSON.parse(info).all_seeds; progress?skip_current_image=true; the upscale
// button's POST /sdapi/v1/extra-single-image/ (image).
func openOutpaint(c *client) {
	c.origin = "http://127.0.0.1:3456"
	c.ok("GET", "/sdapi/v1/options", nil)
	c.ok("GET", "/sdapi/v1/options", nil)
	c.list("/sdapi/v1/prompt-styles", "name")
	if s := c.list("/sdapi/v1/samplers", "name"); len(s) == 0 {
		c.t.Fatal("no samplers: data[0].name throws")
	}
	c.list("/sdapi/v1/upscalers", "name")
	models := c.list("/sdapi/v1/sd-models", "title")
	cur := c.checkpoint(models)
	c.list("/sdapi/v1/schedulers", "label")
	var scripts map[string][]string
	c.ok("GET", "/sdapi/v1/scripts", nil).json(c.t, "scripts", &scripts)
	if scripts["txt2img"] == nil {
		c.t.Errorf("scripts %v", scripts)
	}
	c.list("/sdapi/v1/loras", "name")
	c.ok("POST", "/sdapi/v1/options/", map[string]any{"sd_model_checkpoint": cur})
	g, info, _ := c.generate("/sdapi/v1/txt2img", map[string]any{"prompt": "a castle", "negative_prompt": "", "seed": "77", "sampler_index": "Euler",
		"scheduler": "Automatic", "steps": 1, "cfg_scale": 7, "width": 64, "height": 64, "batch_size": 1, "n_iter": 1, "mask": "", "init_images": []string{},
		"alwayson_scripts": map[string]any{}, "hr_fix_lock_px": 0, "upscale_x": 1})
	if seeds, _ := info["all_seeds"].([]any); len(seeds) != 1 || seeds[0] != 77.0 {
		c.t.Errorf("all_seeds %v", info["all_seeds"])
	}
	c.ok("GET", "/sdapi/v1/progress?skip_current_image=true", nil)
	var up map[string]any
	c.ok("POST", "/sdapi/v1/extra-single-image/", map[string]any{"resize_mode": 0, "upscaling_resize": 2, "upscaler_1": "Lanczos", "image": g.Images[0]}).json(c.t, "extra-single-image", &up)
	im, _ := up["image"].(string)
	if im == "" {
		c.t.Fatalf("extra-single-image: %v", up)
	}
	if img, _ := decodeImage(c.t, im); img.Rect.Dx() != 128 {
		c.t.Errorf("upscaled ×2 from 64: %v", img.Rect)
	}
}

// webuiapiPy replays mix1009/sdwebuiapi webuiapi/webuiapi.py: the constructor's GET scripts
// (["txt2img"], looking for ControlNet and the like), util_get_current_model (options'
// sd_model_checkpoint), util_set_model (POST options with a title), util_wait_for_ready
// (progress, state.job_count), and txt2img as it sends it — every field, nulls for
// hr_checkpoint_name/hr_sampler_name/hr_scheduler/script_name, sampler "Euler a",
// override_settings {} — reading images, json.loads(info) and parameters (_to_api_result
// raises on anything but 200); save_images true saves on the server.
func webuiapiPy(c *client) {
	var scripts map[string][]string
	c.ok("GET", "/sdapi/v1/scripts", nil).json(c.t, "scripts", &scripts)
	models := c.list("/sdapi/v1/sd-models", "title", "model_name", "sha256")
	cur := c.checkpoint(models)
	c.ok("POST", "/sdapi/v1/options", map[string]any{"sd_model_checkpoint": cur})
	var p struct {
		State struct {
			JobCount *int `json:"job_count"`
		} `json:"state"`
	}
	c.ok("GET", "/sdapi/v1/progress", nil).json(c.t, "progress", &p)
	if p.State.JobCount == nil {
		c.t.Error("progress without state.job_count")
	}
	body := map[string]any{"enable_hr": false, "denoising_strength": 0.7, "firstphase_width": 0, "firstphase_height": 0, "hr_scale": 2,
		"hr_upscaler": "Latent", "hr_second_pass_steps": 0, "hr_resize_x": 0, "hr_resize_y": 0, "hr_checkpoint_name": nil, "hr_sampler_name": nil,
		"hr_scheduler": nil, "hr_prompt": "", "hr_negative_prompt": "", "prompt": "a mountain", "styles": []string{}, "seed": 5, "subseed": -1,
		"subseed_strength": 0.0, "seed_resize_from_h": 0, "seed_resize_from_w": 0, "sampler_name": "Euler a", "scheduler": "automatic",
		"batch_size": 1, "n_iter": 1, "steps": 1, "cfg_scale": 7.0, "width": 64, "height": 64, "restore_faces": false, "tiling": false,
		"do_not_save_samples": false, "do_not_save_grid": false, "negative_prompt": "", "eta": 1.0, "s_min_uncond": 0, "s_churn": 0,
		"s_tmax": 0, "s_tmin": 0, "s_noise": 1, "override_settings": map[string]any{}, "override_settings_restore_afterwards": true,
		"sampler_index": "Euler a", "script_name": nil, "script_args": []any{}, "send_images": true, "save_images": true, "alwayson_scripts": map[string]any{}}
	g, info, _ := c.generate("/sdapi/v1/txt2img", body)
	if g.Parameters == nil || info["seed"] != 5.0 || info["sd_model_hash"] == nil {
		c.t.Errorf("parameters %v, info seed %v, sd_model_hash %v", g.Parameters, info["seed"], info["sd_model_hash"])
	}
}

// nodeSDWebUI replays nerdenough/node-sd-webui src/sdapi/txt2img.ts (undefined fields left
// out of the body; status 200 and data.images required) and src/sdapi/pngInfo.ts, which splits
// info by position: line 2 "Negative prompt:" when there is one, then the values of the next
// line's "K: V" pairs as Steps, Sampler, CFG scale, Seed, Size (WxH), Model hash, Model.
func nodeSDWebUI(c *client) {
	g, _, _ := c.generate("/sdapi/v1/txt2img", map[string]any{"prompt": "a bridge", "negative_prompt": "rain", "seed": 31, "steps": 2,
		"width": 64, "height": 64, "cfg_scale": 3})
	info := c.pngInfo(g.Images[0])
	split := strings.Split(info, "\n")
	off := 0
	if len(split) > 1 && strings.HasPrefix(split[1], "Negative prompt:") {
		off++
	}
	if len(split) < off+2 || off != 1 {
		c.t.Fatalf("info %q: no negative prompt line (cfg_scale 3 uses it)", info)
	}
	var values []string
	for _, v := range strings.Split(split[off+1], ",") {
		_, after, _ := strings.Cut(v, ": ")
		values = append(values, after)
	}
	if len(values) < 7 {
		c.t.Fatalf("info's values %q", values)
	}
	steps, _ := strconv.Atoi(values[0])
	seed, _ := strconv.Atoi(values[3])
	if split[0] != "a bridge" || steps != 2 || seed != 31 || values[4] != "64x64" || len(values[5]) != 10 || values[6] != "tiny.cmf" && !strings.HasSuffix(values[6], ".cmf") {
		c.t.Errorf("read positionally: prompt %q, steps %d, seed %d, size %q, model hash %q, model %q", split[0], steps, seed, values[4], values[5], values[6])
	}
	if _, err := strconv.ParseUint(values[5], 16, 64); err != nil {
		c.t.Errorf("Model hash %q is not hex", values[5])
	}
}
