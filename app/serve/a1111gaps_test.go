package serve_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"easel/app/imagefile"
	"easel/app/serve"
	"easel/engine/pipeline"
)

// alphaGen is fakeGen with the picture's alpha at 128 (the tiny model's pictures are
// half-transparent too), and the model file the generator was set to when each job ran.
type alphaGen struct {
	fakeGen
	mu    sync.Mutex
	path  string
	paths []string
}

func (g *alphaGen) setPath(p string) { g.mu.Lock(); g.path = p; g.mu.Unlock() }

func (g *alphaGen) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	g.mu.Lock()
	g.paths = append(g.paths, g.path)
	g.mu.Unlock()
	res, err := g.fakeGen.Run(ctx, req, events)
	if res != nil {
		for i := 3; i < len(res.Image.Pix); i += 4 {
			res.Image.Pix[i] = 128
		}
	}
	return res, err
}

func (g *alphaGen) ranWith() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.paths...)
}

// pngColourType is a PNG's IHDR colour type (2 RGB, 6 RGBA).
func pngColourType(t testing.TB, b64 string) byte {
	t.Helper()
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(data) < 26 {
		t.Fatalf("not a PNG: %v", err)
	}
	return data[25]
}

// TestA1111AnswersRGB: an answer is an RGB PNG of the colour channels as rendered (alpha dropped
// as Pillow's convert("RGB") drops it); easel_alpha true keeps the alpha.
func TestA1111AnswersRGB(t *testing.T) {
	gen := &alphaGen{}
	ts := newTestServer(t, gen, serve.Config{})
	for _, alpha := range []bool{false, true} {
		var resp genResponse
		if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"width": 32, "height": 32, "seed": 300, "easel_alpha": alpha}, &resp); code != 200 {
			t.Fatalf("txt2img: %d", code)
		}
		img, _ := decodeImage(t, resp.Images[0])
		ctype, a := pngColourType(t, resp.Images[0]), img.Pix[3]
		if r, g := img.Pix[0], img.Pix[1]; r != byte(300&0xff) || g != byte(300>>8) {
			t.Errorf("easel_alpha %v: colour channels %d,%d changed (want the rendered %d,%d)", alpha, r, g, 300&0xff, 300>>8)
		}
		if !alpha && (ctype != 2 || a != 255) || alpha && (ctype != 6 || a != 128) {
			t.Errorf("easel_alpha %v: colour type %d, alpha %d", alpha, ctype, a)
		}
	}
}

// TestA1111SmallGaps: GET / answers 200; a 200,000-character prompt is refused at once with a 422
// naming the field (and logged), the server serving on; A1111 emphasis is said to be read as
// plain text; interrogate with a model A1111 does not have is its 404; options a client posts
// come back from GET /options.
func TestA1111SmallGaps(t *testing.T) {
	var logs syncBuffer
	gen := &fakeGen{}
	ts := newTestServer(t, gen, serve.Config{Log: log.New(&logs, "", 0)})
	if code, _ := bearer(t, "GET", ts.URL+"/", "", nil, nil); code != http.StatusOK {
		t.Errorf("GET /: %d", code)
	}
	var refused struct {
		Detail []struct {
			Loc []any
			Msg string
		}
	}
	if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"prompt": strings.Repeat("a", 200000)}, &refused); code != 422 ||
		len(refused.Detail) != 1 || refused.Detail[0].Loc[1] != "prompt" || !strings.Contains(refused.Detail[0].Msg, "at most") {
		t.Errorf("a 200,000-character prompt: %d %+v", code, refused)
	}
	if n := len(gen.requests()); n != 0 {
		t.Errorf("the refused prompt ran %d job(s)", n)
	}
	waitFor(t, "the refusal in the log", func() bool { return strings.Contains(logs.String(), "refused POST /sdapi/v1/txt2img") })
	if strings.Contains(logs.String(), "aaaa") {
		t.Error("the log holds the refused prompt")
	}
	var resp genResponse
	if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"prompt": "a (red:1.3) apple", "width": 32, "height": 32}, &resp); code != 200 {
		t.Fatalf("after the refusal: %d", code)
	}
	if w := jsonText(resp.info(t)["warnings"]); !strings.Contains(w, "(red:1.3)") || !strings.Contains(w, "plain text") {
		t.Errorf("emphasis not said: %s", w)
	}
	var nf struct{ Detail string }
	if code := call(t, "POST", ts.URL+"/sdapi/v1/interrogate", map[string]any{"image": pngBase64(t, testPicture(32, 32)), "model": "blip9"}, &nf); code != 404 || !strings.Contains(nf.Detail, "Model not found") {
		t.Errorf("interrogate with an unknown model: %d %+v", code, nf)
	}
	if code := call(t, "POST", ts.URL+"/sdapi/v1/options", map[string]any{"samples_save": false, "jpeg_quality": 93}, nil); code != 200 {
		t.Fatalf("POST options: %d", code)
	}
	var opts map[string]any
	call(t, "GET", ts.URL+"/sdapi/v1/options", nil, &opts)
	if opts["samples_save"] != false || opts["jpeg_quality"] != 93.0 || opts["sd_model_checkpoint"] == nil {
		t.Errorf("options after POST: samples_save %v jpeg_quality %v model %v", opts["samples_save"], opts["jpeg_quality"], opts["sd_model_checkpoint"])
	}
}

// TestOverrideSettingsModelPerRequest: override_settings.sd_model_checkpoint renders that request
// with the other model of the folder (its PNG says so) and the next request with the server's
// own again.
func TestOverrideSettingsModelPerRequest(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(tinyModel(t))
	if err != nil {
		t.Fatal(err)
	}
	main, other := filepath.Join(dir, "main.cmf"), filepath.Join(dir, "other.cmf")
	for _, p := range []string{main, other} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gen := &alphaGen{path: main}
	ts := newTestServer(t, gen, serve.Config{Model: main, UseModel: gen.setPath})
	for i, body := range []map[string]any{
		{"width": 32, "height": 32, "override_settings": map[string]any{"sd_model_checkpoint": "other"}},
		{"width": 32, "height": 32},
	} {
		var resp genResponse
		if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", body, &resp); code != 200 {
			t.Fatalf("request %d: %d %s", i, code, resp.Info)
		}
		_, png := decodeImage(t, resp.Images[0])
		m, err := imagefile.Read(bytes.NewReader(png), "answer")
		want := []string{"other.cmf", "main.cmf"}[i]
		if err != nil || m.Settings == nil || m.Settings.Model != want {
			t.Errorf("request %d: the picture's model %+v, want %s", i, m.Settings, want)
		}
	}
	if ran := gen.ranWith(); len(ran) != 2 || ran[0] != other || ran[1] != main {
		t.Errorf("the jobs ran with %v, want [%s %s]", ran, other, main)
	}
	var bad struct{ Detail []struct{ Msg string } }
	if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"override_settings": map[string]any{"sd_model_checkpoint": "nope"}}, &bad); code != 422 {
		t.Errorf("an unknown override model: %d %+v", code, bad)
	}
}

// TestSkippedAndFinishedBatchesLeaveNoCheckpoints: a batch whose image was skipped, and a batch
// that finished, leave nothing in the checkpoint folder, so the same request sent again is a new
// run (not a resume of the old one with its old seeds).
func TestSkippedAndFinishedBatchesLeaveNoCheckpoints(t *testing.T) {
	dir := t.TempDir()
	gen := &fakeGen{gate: make(chan struct{})}
	ts := newTestServer(t, gen, serve.Config{Checkpoints: dir})
	body := map[string]any{"width": 32, "height": 32, "steps": 2, "batch_size": 2, "seed": -1}
	answered := make(chan genResponse, 1)
	go func() {
		var resp genResponse
		call(t, "POST", ts.URL+"/sdapi/v1/txt2img", body, &resp)
		answered <- resp
	}()
	gen.gate <- struct{}{}
	waitFor(t, "the first step and its checkpoint folder", func() bool {
		var p progressBody
		call(t, "GET", ts.URL+"/sdapi/v1/progress", nil, &p)
		return p.State.SamplingStep == 1 && len(ckFolders(dir)) == 1
	})
	call(t, "POST", ts.URL+"/sdapi/v1/skip", nil, nil)
	gen.gate <- struct{}{}
	gen.gate <- struct{}{}
	if resp := <-answered; len(resp.Images) != 1 || !strings.Contains(resp.Info, "skipped") {
		t.Fatalf("after skip: %d images %.200s", len(resp.Images), resp.Info)
	}
	if left := ckFolders(dir); len(left) != 0 {
		t.Errorf("a skipped batch left checkpoints %v", left)
	}
	go func() {
		for range 4 {
			gen.gate <- struct{}{}
		}
	}()
	var resp genResponse
	if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", body, &resp); code != 200 || len(resp.Images) != 2 {
		t.Fatalf("the same request again: %d, %d images", code, len(resp.Images))
	}
	if w := jsonText(resp.info(t)["warnings"]); strings.Contains(w, "resumed") || strings.Contains(w, "stopped") {
		t.Errorf("the same request again resumed an old run: %s", w)
	}
	if left := ckFolders(dir); len(left) != 0 {
		t.Errorf("a finished batch left checkpoints %v", left)
	}
}
