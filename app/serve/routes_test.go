package serve_test

import (
	"context"
	"fmt"
	"image"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"easel/app/serve"
)

// TestOptionsSwitchModelsByName: GET options names the model; POST sd_model_checkpoint switches
// among the folder's .cmf files by name (stem or A1111's title), and an unknown name — a path
// included — is A1111's 500 with the reason, the model unchanged. sd-models lists the folder.
func TestOptionsSwitchModelsByName(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"first.cmf", "second.cmf"} {
		if err := os.Symlink(tinyModel(t), filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var switched []string
	ts := newTestServer(t, &fakeGen{}, serve.Config{Model: filepath.Join(dir, "first.cmf"),
		SetModel: func(p string) { mu.Lock(); switched = append(switched, p); mu.Unlock() }})
	// A1111's titles: "NAME [short hash]" once the file's SHA-256 is known (read in the background).
	ts.WaitModelHashes(context.Background())
	sum := fileSHA256(t, tinyModel(t))
	var opts map[string]any
	if call(t, "GET", ts.URL+"/sdapi/v1/options", nil, &opts); opts["sd_model_checkpoint"] != "first.cmf ["+sum[:10]+"]" || opts["sd_checkpoint_hash"] != sum {
		t.Errorf("options %v", opts)
	}
	var models []map[string]any
	call(t, "GET", ts.URL+"/sdapi/v1/sd-models", nil, &models)
	if len(models) != 2 || models[1]["model_name"] != "second" || models[1]["title"] != "second.cmf ["+sum[:10]+"]" ||
		models[1]["hash"] != sum[:10] || models[1]["sha256"] != sum || models[1]["filename"] != "second.cmf" {
		t.Errorf("sd-models %v", models)
	}
	if code := call(t, "POST", ts.URL+"/sdapi/v1/options", map[string]any{"sd_model_checkpoint": "second [abc]", "CLIP_stop_at_last_layers": 2}, nil); code != 200 {
		t.Fatalf("switch: %d", code)
	}
	if call(t, "GET", ts.URL+"/sdapi/v1/options", nil, &opts); opts["sd_model_checkpoint"] != "second.cmf ["+sum[:10]+"]" || len(switched) != 1 || switched[0] != filepath.Join(dir, "second.cmf") {
		t.Errorf("after the switch: options %v, generator switched to %v", opts["sd_model_checkpoint"], switched)
	}
	for _, bad := range []string{"../second.cmf", filepath.Join(dir, "first.cmf"), "missing"} {
		var e map[string]any
		if code := call(t, "POST", ts.URL+"/sdapi/v1/options", map[string]any{"sd_model_checkpoint": bad}, &e); code != 500 || !strings.Contains(fmt.Sprint(e["errors"]), "not found") {
			t.Errorf("model %q: %d %v", bad, code, e)
		}
	}
	if len(switched) != 1 {
		t.Errorf("a refused name switched the model: %v", switched)
	}
}

// TestLoRATagsByName: <lora:NAME:WEIGHT> is found in the LoRA folder by name and removed from the
// prompt; a name that is a path, or not there, is a warning and reaches no file; a weight out of
// range is a 422 on the prompt. /loras lists the folder.
func TestLoRATagsByName(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ink.safetensors"), []byte("x"), 0o644)
	gen := &fakeGen{}
	ts := newTestServer(t, gen, serve.Config{LoRADir: dir})
	var resp genResponse
	if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"prompt": "a cat <lora:ink:0.5> <lora:../../etc/passwd:1><lora:nope>", "width": 32, "height": 32}, &resp); code != 200 {
		t.Fatalf("%d", code)
	}
	r := gen.requests()[0]
	if r.Prompt != "a cat" || len(r.LoRAFiles) != 1 || r.LoRAFiles[0].Path != filepath.Join(dir, "ink.safetensors") || r.LoRAFiles[0].Strength != 0.5 {
		t.Errorf("prompt %q, LoRAs %+v", r.Prompt, r.LoRAFiles)
	}
	if w := resp.info(t)["warnings"]; !strings.Contains(fmt.Sprint(w), "etc/passwd") || !strings.Contains(fmt.Sprint(w), "nope") {
		t.Errorf("warnings %v", w)
	}
	var e struct{ Detail []map[string]any }
	if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"prompt": "<lora:ink:9>"}, &e); code != 422 || fmt.Sprint(e.Detail[0]["loc"]) != "[body prompt]" {
		t.Errorf("weight 9: %d %v", code, e)
	}
	var loras []map[string]any
	if call(t, "GET", ts.URL+"/sdapi/v1/loras", nil, &loras); len(loras) != 1 || loras[0]["name"] != "ink" {
		t.Errorf("loras %v", loras)
	}
}

// TestValidationAsFastAPI: malformed JSON, a body that is not an object, a wrong type and a value
// out of range are 422s with FastAPI/pydantic's detail naming the field; pydantic's coercions
// (numbers as strings) and unknown keys pass.
func TestValidationAsFastAPI(t *testing.T) {
	ts := newTestServer(t, &fakeGen{}, serve.Config{})
	cases := []struct {
		body     string
		loc, typ string
	}{
		{`{"prompt": "a",`, "[body 15]", "value_error.jsondecode"},
		{`[1, 2]`, "[body]", "type_error.dict"},
		{`{"steps": "many"}`, "[body steps]", "type_error.integer"},
		{`{"cfg_scale": "high"}`, "[body cfg_scale]", "type_error.float"},
		{`{"width": 99999, "height": 64}`, "[body width]", "value_error.number.not_le"},
		{`{"batch_size": 0}`, "[body batch_size]", "value_error.number.not_ge"},
		{`{"prompt": {"a": 1}}`, "[body prompt]", "type_error.str"},
		{`{"extra_images": "abc"}`, "[body extra_images]", "type_error.list"},
		{`{"extra_images": ["not base64!"]}`, "[body extra_images 0]", "value_error"},
		{`{"send_images": "maybe"}`, "[body send_images]", "type_error.bool"},
		{`{"subseed_strength": 2}`, "[body subseed_strength]", "value_error.number.not_le"},
		{`{"easel_sigmas": "1, 0.5"}`, "[body easel_sigmas]", "type_error.list"},
		{`{"easel_sigmas": [1, 0]}`, "[body easel_sigmas]", "value_error"},
		{`{"easel_sigmas": [1, 0.5], "steps": 4}`, "[body easel_sigmas]", "value_error"},
		{`{"easel_scheduler": {"num_train_timesteps": 0}}`, "[body easel_scheduler]", "value_error"},
	}
	for _, c := range cases {
		var e struct{ Detail []map[string]any }
		code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", c.body, &e)
		if code != 422 || len(e.Detail) == 0 || fmt.Sprint(e.Detail[0]["loc"]) != c.loc || e.Detail[0]["type"] != c.typ || e.Detail[0]["msg"] == "" {
			t.Errorf("%s: %d %v; want 422 at %s (%s)", c.body, code, e.Detail, c.loc, c.typ)
		}
	}
	var ok genResponse
	if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", `{"width": "64", "height": 64.0, "steps": "2", "cfg_scale": "1", "unknown": [1], "restore_faces": false}`, &ok); code != 200 || len(ok.Images) != 1 {
		t.Errorf("coerced fields and unknown keys: %d", code)
	}
	if code := call(t, "GET", ts.URL+"/sdapi/v1/txt2img", nil, nil); code != http.StatusMethodNotAllowed {
		t.Errorf("GET txt2img: %d", code)
	}
	if code := call(t, "GET", ts.URL+"/sdapi/v1/nothing", nil, nil); code != 404 {
		t.Errorf("unknown route: %d", code)
	}
}

// TestCatalogRoutes: samplers, schedulers, memory, cmd-flags (credentials left out) and png-info
// on an answer's image.
func TestCatalogRoutes(t *testing.T) {
	ts := newTestServer(t, &fakeGen{}, serve.Config{Flags: map[string]any{"listen": "127.0.0.1:7860"}, Auth: serve.Auth{}})
	var samplers []map[string]any
	if call(t, "GET", ts.URL+"/sdapi/v1/samplers", nil, &samplers); len(samplers) != 1 || samplers[0]["name"] != "Euler" {
		t.Errorf("samplers %v", samplers)
	}
	var scheds []map[string]any
	if call(t, "GET", ts.URL+"/sdapi/v1/schedulers", nil, &scheds); len(scheds) != 1 || scheds[0]["name"] != "automatic" {
		t.Errorf("schedulers %v", scheds)
	}
	var mem map[string]map[string]any
	if call(t, "GET", ts.URL+"/sdapi/v1/memory", nil, &mem); mem["ram"]["used"] == nil || mem["cuda"]["error"] == nil {
		t.Errorf("memory %v", mem)
	}
	var flags map[string]any
	if call(t, "GET", ts.URL+"/sdapi/v1/cmd-flags", nil, &flags); flags["listen"] != "127.0.0.1:7860" || flags["api"] != true {
		t.Errorf("cmd-flags %v", flags)
	}
	var resp genResponse
	call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"prompt": "a lighthouse", "width": 32, "height": 32, "seed": 5}, &resp)
	var pi struct {
		Info       string
		Items      map[string]any
		Parameters map[string]any
	}
	if code := call(t, "POST", ts.URL+"/sdapi/v1/png-info", map[string]any{"image": "data:image/png;base64," + resp.Images[0]}, &pi); code != 200 ||
		!strings.Contains(pi.Info, "a lighthouse") || !strings.Contains(pi.Info, "Seed: 5") || pi.Items["easel"] == nil || pi.Parameters["prompt"] != "a lighthouse" {
		t.Errorf("png-info: %d %+v", code, pi)
	}
	var foreign map[string]any
	if code := call(t, "POST", ts.URL+"/sdapi/v1/png-info", map[string]any{"image": pngBase64(t, image.NewNRGBA(image.Rect(0, 0, 2, 2)))}, &foreign); code != 200 || foreign["info"] != "" {
		t.Errorf("png-info of a bare PNG: %d %v", code, foreign)
	}
}
