package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/serve"
	"easel/engine/pipeline"
)

// TestExactSizes: 600×600 and 960×540 (not multiples of 32) come back exactly that size, from
// the tiny model: rendered at 608×608 and 960×544 and centre-cropped; info, parameters and the
// infotext of the image and of info say the size delivered, and a warning says how it was made.
func TestExactSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	model := tinyModel(t)
	ts := newTestServer(t, &jobs.ModelGenerator{Path: model}, serve.Config{Model: model})
	for _, c := range []struct{ w, h, rw, rh int }{{600, 600, 608, 608}, {960, 540, 960, 544}} {
		var resp genResponse
		if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"prompt": "a harbour", "width": c.w, "height": c.h, "steps": 1, "seed": 3}, &resp); code != 200 || len(resp.Images) != 1 {
			t.Fatalf("%d×%d: %d, %d images %+v", c.w, c.h, code, len(resp.Images), resp)
		}
		img, data := decodeImage(t, resp.Images[0])
		if img.Rect.Dx() != c.w || img.Rect.Dy() != c.h {
			t.Errorf("%d×%d came back %d×%d", c.w, c.h, img.Rect.Dx(), img.Rect.Dy())
		}
		info := resp.info(t)
		size := fmt.Sprintf("Size: %dx%d", c.w, c.h)
		texts, _ := info["infotexts"].([]any)
		if info["width"] != float64(c.w) || info["height"] != float64(c.h) || len(texts) != 1 || !strings.Contains(fmt.Sprint(texts[0]), size) {
			t.Errorf("%d×%d: info says %v×%v, infotexts %v", c.w, c.h, info["width"], info["height"], texts)
		}
		if resp.Parameters["width"] != float64(c.w) || resp.Parameters["height"] != float64(c.h) {
			t.Errorf("%d×%d: parameters say %v×%v", c.w, c.h, resp.Parameters["width"], resp.Parameters["height"])
		}
		m, err := imagefile.Read(bytes.NewReader(data), "answer")
		if err != nil || !strings.Contains(m.Parameters, size) || m.Settings.Width != c.w || m.Settings.Height != c.h {
			t.Errorf("%d×%d: the PNG's parameters %q (%v)", c.w, c.h, m.Parameters, err)
		}
		how := fmt.Sprintf("rendered at %d×%d", c.rw, c.rh)
		if !strings.Contains(jsonText(info["warnings"]), how) {
			t.Errorf("%d×%d: no warning saying it was %s: %v", c.w, c.h, how, info["warnings"])
		}
	}
}

// TestExactSizeImg2imgKeepsTheStartImageInPlace: img2img at 600×600 with a mask that keeps the
// left half: the start image is fitted and cropped the same way as the render, so the kept half
// comes back as the start image's pixels, in place.
func TestExactSizeImg2imgKeepsTheStartImageInPlace(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	model := tinyModel(t)
	ts := newTestServer(t, &jobs.ModelGenerator{Path: model}, serve.Config{Model: model})
	start := image.NewNRGBA(image.Rect(0, 0, 600, 600))
	mask := image.NewNRGBA(image.Rect(0, 0, 600, 600))
	for y := 0; y < 600; y++ {
		for x := 0; x < 600; x++ {
			start.SetNRGBA(x, y, color.NRGBA{uint8(x * 255 / 599), uint8(y * 255 / 599), 90, 255})
			v := uint8(0)
			if x >= 300 {
				v = 255
			}
			mask.SetNRGBA(x, y, color.NRGBA{v, v, v, 255})
		}
	}
	var resp genResponse
	if code := call(t, "POST", ts.URL+"/sdapi/v1/img2img", map[string]any{"prompt": "a boat", "width": 600, "height": 600, "steps": 2, "seed": 4,
		"init_images": []string{pngBase64(t, start)}, "mask": pngBase64(t, mask), "mask_blur": 0, "inpaint_full_res": false, "denoising_strength": 1}, &resp); code != 200 || len(resp.Images) != 1 {
		t.Fatalf("img2img: %d, %d images %s", code, len(resp.Images), resp.Info)
	}
	got, _ := decodeImage(t, resp.Images[0])
	if got.Rect.Dx() != 600 || got.Rect.Dy() != 600 {
		t.Fatalf("came back %v", got.Rect)
	}
	for _, p := range []image.Point{{0, 0}, {150, 300}, {250, 599}, {0, 599}} {
		if got.NRGBAAt(p.X, p.Y) != start.NRGBAAt(p.X, p.Y) {
			t.Errorf("kept pixel %v is %v, the start image's is %v", p, got.NRGBAAt(p.X, p.Y), start.NRGBAAt(p.X, p.Y))
		}
	}
}

// gatedGen runs the real generator once the test releases it, so an /interrupt can arrive while
// its job is running and before its first step.
type gatedGen struct {
	inner jobs.Generator
	gate  chan struct{}
}

func (g *gatedGen) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	select {
	case <-g.gate:
	case <-ctx.Done():
		close(events)
		return nil, ctx.Err()
	}
	return g.inner.Run(ctx, req, events)
}

// TestInterruptReturnsTheImageSoFar: a request of 6 steps on the tiny model, interrupted while
// it runs, answers with one image decoded after the step it reached (1 of 6), of the size asked,
// with info saying it was interrupted; its second image (n_iter 2) is cancelled.
func TestInterruptReturnsTheImageSoFar(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	model := tinyModel(t)
	gen := &gatedGen{inner: &jobs.ModelGenerator{Path: model}, gate: make(chan struct{})}
	ts := newTestServer(t, gen, serve.Config{Model: model})
	answered := make(chan genResponse, 1)
	go func() {
		var resp genResponse
		call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"prompt": "a lamp", "width": 64, "height": 64, "steps": 6, "n_iter": 2, "seed": 8}, &resp)
		answered <- resp
	}()
	waitFor(t, "the job to run", func() bool {
		var p progressBody
		call(t, "GET", ts.URL+"/sdapi/v1/progress", nil, &p)
		return p.State.JobCount == 2
	})
	if code := call(t, "POST", ts.URL+"/sdapi/v1/interrupt", nil, nil); code != 200 {
		t.Fatalf("interrupt: %d", code)
	}
	close(gen.gate)
	resp := <-answered
	if len(resp.Images) != 1 {
		t.Fatalf("%d images after the interrupt, want the one being made: %s", len(resp.Images), resp.Info)
	}
	img, data := decodeImage(t, resp.Images[0])
	if img.Rect.Dx() != 64 || img.Rect.Dy() != 64 {
		t.Errorf("the interrupted image is %v", img.Rect)
	}
	info := resp.info(t)
	if info["interrupted"] != true || !strings.Contains(jsonText(info["warnings"]), "interrupted at step 1 of 6") {
		t.Errorf("info does not say it was interrupted: %v / %v", info["interrupted"], info["warnings"])
	}
	if _, err := imagefile.Read(bytes.NewReader(data), "answer"); err != nil {
		t.Errorf("the interrupted image carries no settings: %v", err)
	}
}

// TestStepsOneAndTheUnusedNegativePrompt: steps 1 is a valid request (one step of the schedule);
// a negative prompt CFG 1 would ignore is said, naming cfg_scale; save_images saves into the
// server's folder, and is refused with a warning where the server does not save.
func TestStepsOneAndTheUnusedNegativePrompt(t *testing.T) {
	var mu sync.Mutex // the handlers' goroutines save
	var saved []string
	ts := newTestServer(t, &fakeGen{}, serve.Config{Save: func(img *image.NRGBA, set *imagefile.Settings) error {
		mu.Lock()
		defer mu.Unlock()
		saved = append(saved, fmt.Sprintf("%dx%d seed %d", img.Rect.Dx(), img.Rect.Dy(), set.Seed))
		return nil
	}})
	var resp genResponse
	if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"prompt": "a cat", "negative_prompt": "dogs", "steps": 1, "width": 32, "height": 32, "seed": 9, "save_images": true}, &resp); code != 200 {
		t.Fatalf("steps 1: %d %s", code, resp.Info)
	}
	info := resp.info(t)
	if w := jsonText(info["warnings"]); !strings.Contains(w, "negative_prompt") || !strings.Contains(w, "cfg_scale") {
		t.Errorf("the unused negative prompt was not said: %s", w)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(saved) != 1 || saved[0] != "32x32 seed 9" || resp.Parameters["save_images"] != true {
		t.Errorf("save_images: saved %v, parameters %v", saved, resp.Parameters["save_images"])
	}
	call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"prompt": "a cat", "negative_prompt": "dogs", "cfg_scale": 4, "width": 32, "height": 32}, &resp)
	if w := jsonText(resp.info(t)["warnings"]); strings.Contains(w, "negative_prompt") {
		t.Errorf("with cfg_scale 4 the negative prompt is used, yet: %s", w)
	}

	noSave := newTestServer(t, &fakeGen{}, serve.Config{NoSave: true})
	call(t, "POST", noSave.URL+"/sdapi/v1/txt2img", map[string]any{"prompt": "a cat", "width": 32, "height": 32, "save_images": true}, &resp)
	if w := jsonText(resp.info(t)["warnings"]); !strings.Contains(w, "save_images was refused") {
		t.Errorf("a server that does not save did not say so: %s", w)
	}
}

// absolute is an absolute file path in an answer.
var absolute = regexp.MustCompile(`(^|[\s"'(=\[])/(home|tmp|Users|var|private|root|etc|opt|mnt|Volumes)/`)

// TestNoPathsInAnswers: /cmd-flags (the model given as a path) and the error answers (a model
// that cannot be opened, a generation that fails on a file) name files, never where they are.
func TestNoPathsInAnswers(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "tiny.cmf")
	if err := os.Symlink(tinyModel(t), model); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.cmf")
	if err := os.WriteFile(broken, []byte("not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	failing := failGen{err: fmt.Errorf("cannot open %s: no such file or directory", filepath.Join(dir, "loras", "gone.safetensors"))}
	ts := newTestServer(t, failing, serve.Config{Model: model, SetModel: func(string) {},
		Flags: map[string]any{"model": model, "listen": "127.0.0.1:7860"}})
	get := func(method, path string, body any) string {
		req, _ := json.Marshal(body)
		if body == nil {
			req = nil
		}
		r, _ := http.NewRequest(method, ts.URL+path, bytes.NewReader(req))
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	flags := get("GET", "/sdapi/v1/cmd-flags", nil)
	if !strings.Contains(flags, `"model":"tiny.cmf"`) {
		t.Errorf("cmd-flags does not name the model: %s", flags)
	}
	answers := map[string]string{
		"cmd-flags":     flags,
		"broken model":  get("POST", "/sdapi/v1/options", map[string]any{"sd_model_checkpoint": "broken.cmf"}),
		"failed job":    get("POST", "/sdapi/v1/txt2img", map[string]any{"prompt": "x", "width": 32, "height": 32}),
		"missing model": get("POST", "/sdapi/v1/options", map[string]any{"sd_model_checkpoint": "elsewhere"}),
		"sd-models":     get("GET", "/sdapi/v1/sd-models", nil),
		"loras":         get("GET", "/sdapi/v1/loras", nil),
	}
	for name, a := range answers {
		if absolute.MatchString(a) || strings.Contains(a, dir) {
			t.Errorf("%s answers with a path: %s", name, a)
		}
	}
	if !strings.Contains(answers["broken model"], "broken.cmf") || !strings.Contains(answers["failed job"], "gone.safetensors") {
		t.Errorf("the errors no longer name the file: %v", answers)
	}
}

// failGen fails every job with its error.
type failGen struct{ err error }

func (g failGen) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	close(events)
	return nil, g.err
}

// TestCORS: without origins no preflight is answered; with --cors-allow-origins a preflight from
// that origin gets the allow headers (before credentials, as a browser sends none with it) and
// its requests carry Access-Control-Allow-Origin; another origin's preflight gets no allow
// header; the regex allows what it matches.
func TestCORS(t *testing.T) {
	preflight := func(url, origin string) *http.Response {
		r, _ := http.NewRequest("OPTIONS", url+"/sdapi/v1/txt2img", nil)
		r.Header.Set("Origin", origin)
		r.Header.Set("Access-Control-Request-Method", "POST")
		r.Header.Set("Access-Control-Request-Headers", "content-type,authorization")
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	closed := newTestServer(t, &fakeGen{}, serve.Config{})
	if resp := preflight(closed.URL, "http://localhost:3456"); resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("a server without origins allowed one: %v", resp.Header)
	}
	cors, err := serve.ParseCORS("http://localhost:3456,https://paint.example", `https://.*\.studio\.lan`)
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, &fakeGen{}, serve.Config{CORS: cors, Auth: serve.Auth{User: "u", Pass: "p"}})
	for _, origin := range []string{"http://localhost:3456", "https://paint.example", "https://a.studio.lan"} {
		resp := preflight(ts.URL, origin)
		if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != origin ||
			!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") || !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "authorization") {
			t.Errorf("preflight from %s: %d %v", origin, resp.StatusCode, resp.Header)
		}
	}
	for _, origin := range []string{"http://evil.example", "https://a.studio.lan.evil.example", "http://localhost:3457"} {
		if resp := preflight(ts.URL, origin); resp.StatusCode == 200 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight from %s: %d %v", origin, resp.StatusCode, resp.Header)
		}
	}
	r, _ := http.NewRequest("GET", ts.URL+"/sdapi/v1/options", nil)
	r.Header.Set("Origin", "http://localhost:3456")
	r.SetBasicAuth("u", "p")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:3456" {
		t.Errorf("GET from an allowed origin: %d %v", resp.StatusCode, resp.Header)
	}
}

// TestAllowFrom: --allow-from 127.0.0.0/8 lets a loopback client in without credentials on a
// server that has them; a server whose networks leave loopback out still asks loopback for them
// (and one with no credentials at all refuses it); --listen 0.0.0.0 with neither is refused, with
// --allow-from alone it is allowed.
func TestAllowFrom(t *testing.T) {
	nets, err := serve.ParseAllowFrom("127.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := serve.ParseAllowFrom("10.0.0.0/8,192.168.1.7")
	if _, err := serve.ParseAllowFrom("10.0.0.0/33"); err == nil {
		t.Error("a bad network was accepted")
	}
	if err := serve.Check("0.0.0.0:7860", serve.Auth{}, "", ""); err == nil || !strings.Contains(err.Error(), "--allow-from") {
		t.Errorf("0.0.0.0 with neither credentials nor networks: %v", err)
	}
	if err := serve.Check("0.0.0.0:7860", serve.Auth{AllowFrom: nets}, "", ""); err != nil {
		t.Errorf("0.0.0.0 with --allow-from: %v", err)
	}
	for _, c := range []struct {
		name string
		auth serve.Auth
		want int
	}{
		{"loopback allowed, credentials set", serve.Auth{User: "u", Pass: "p", AllowFrom: nets}, 200},
		{"loopback allowed, no credentials", serve.Auth{AllowFrom: nets}, 200},
		{"other networks, credentials set", serve.Auth{User: "u", Pass: "p", AllowFrom: other}, 401},
		{"other networks, no credentials", serve.Auth{AllowFrom: other}, 403},
	} {
		ts := newTestServer(t, &fakeGen{}, serve.Config{Auth: c.auth})
		if code := call(t, "GET", ts.URL+"/sdapi/v1/options", nil, nil); code != c.want {
			t.Errorf("%s: %d, want %d", c.name, code, c.want)
		}
	}
}

// TestA1111CatalogueRoutes: the routes clients loop over at startup answer A1111's shapes, one
// trailing slash is accepted, and the extras upscale with Lanczos and Nearest as asked.
func TestA1111CatalogueRoutes(t *testing.T) {
	ts := newTestServer(t, &fakeGen{}, serve.Config{})
	for _, path := range []string{"hypernetworks", "face-restorers", "realesrgan-models", "prompt-styles", "script-info", "extensions", "sd-vae", "latent-upscale-modes", "sd-models/"} {
		var list []any
		if code := call(t, "GET", ts.URL+"/sdapi/v1/"+path, nil, &list); code != 200 || list == nil {
			t.Errorf("%s: %d %v", path, code, list)
		}
	}
	var emb map[string]map[string]any
	if code := call(t, "GET", ts.URL+"/sdapi/v1/embeddings/", nil, &emb); code != 200 || emb["loaded"] == nil || emb["skipped"] == nil {
		t.Errorf("embeddings: %d %v", code, emb)
	}
	var scripts map[string][]string
	if code := call(t, "GET", ts.URL+"/sdapi/v1/scripts", nil, &scripts); code != 200 || scripts["txt2img"] == nil || scripts["img2img"] == nil {
		t.Errorf("scripts: %d %v", code, scripts)
	}
	var ups []map[string]any
	call(t, "GET", ts.URL+"/sdapi/v1/upscalers", nil, &ups)
	names := []string{}
	for _, u := range ups {
		names = append(names, fmt.Sprint(u["name"]))
	}
	if strings.Join(names, ",") != "None,Lanczos,Nearest" {
		t.Errorf("upscalers %v", names)
	}
	if code := call(t, "POST", ts.URL+"/sdapi/v1/options/", map[string]any{"samples_format": "png"}, nil); code != 200 {
		t.Errorf("POST options/ (one trailing slash): %d", code)
	}

	src := image.NewNRGBA(image.Rect(0, 0, 40, 20))
	for i := range src.Pix {
		src.Pix[i] = uint8(i * 7)
	}
	var one struct {
		Image    string `json:"image"`
		HTMLInfo string `json:"html_info"`
	}
	if code := call(t, "POST", ts.URL+"/sdapi/v1/extra-single-image/", map[string]any{"image": pngBase64(t, src), "upscaler_1": "Nearest", "upscaling_resize": 2}, &one); code != 200 {
		t.Fatalf("extra-single-image: %d", code)
	}
	got, _ := decodeImage(t, one.Image)
	if got.Rect.Dx() != 80 || got.Rect.Dy() != 40 || got.NRGBAAt(3, 5) != src.NRGBAAt(1, 2) {
		t.Errorf("Nearest ×2: %v, pixel (3,5) %v, want the source's (1,2) %v", got.Rect, got.NRGBAAt(3, 5), src.NRGBAAt(1, 2))
	}
	var batch struct {
		Images   []string `json:"images"`
		HTMLInfo string   `json:"html_info"`
	}
	if code := call(t, "POST", ts.URL+"/sdapi/v1/extra-batch-images", map[string]any{"imageList": []map[string]any{{"data": pngBase64(t, src), "name": "a.png"}, {"data": pngBase64(t, src), "name": "b.png"}},
		"upscaler_1": "Lanczos", "resize_mode": 1, "upscaling_resize_w": 50, "upscaling_resize_h": 50, "upscaling_crop": true}, &batch); code != 200 || len(batch.Images) != 2 {
		t.Fatalf("extra-batch-images: %d %d", code, len(batch.Images))
	}
	for i, b := range batch.Images {
		if img, _ := decodeImage(t, b); img.Rect.Dx() != 50 || img.Rect.Dy() != 50 {
			t.Errorf("batch image %d: %v, want 50×50 (covered, then cropped)", i, img.Rect)
		}
	}
	// A name A1111 lists by default, with no file of its family in the upscalers folder: Lanczos,
	// said in html_info (learned_test.go has the folder); a name of nothing is a 422.
	if code := call(t, "POST", ts.URL+"/sdapi/v1/extra-single-image", map[string]any{"image": pngBase64(t, src), "upscaler_1": "R-ESRGAN 4x+"}, &one); code != 200 || !strings.Contains(one.HTMLInfo, "Lanczos was used") {
		t.Errorf("an A1111 upscaler Easel does not have: %d %v", code, one.HTMLInfo)
	}
	var bad map[string]any
	if code := call(t, "POST", ts.URL+"/sdapi/v1/extra-single-image", map[string]any{"image": pngBase64(t, src), "upscaler_1": "4x-NoSuchFile"}, &bad); code != 422 || !strings.Contains(jsonText(bad), "Lanczos") {
		t.Errorf("an upscaler of no kind: %d %v", code, bad)
	}
}
