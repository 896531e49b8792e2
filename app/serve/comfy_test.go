package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"easel/app/jobs"
	"easel/app/serve"
)

// comfyDefaultWorkflow is ComfyUI's default text-to-image graph in API format, as Open WebUI
// ships it, with a client's values patched in.
func comfyDefaultWorkflow(prompt, negative string, seed, steps int, cfg float64, w, h int) map[string]any {
	return map[string]any{
		"3": map[string]any{"class_type": "KSampler", "inputs": map[string]any{"seed": seed, "steps": steps, "cfg": cfg, "sampler_name": "euler",
			"scheduler": "normal", "denoise": 1, "model": []any{"4", 0}, "positive": []any{"6", 0}, "negative": []any{"7", 0}, "latent_image": []any{"5", 0}}},
		"4": map[string]any{"class_type": "CheckpointLoaderSimple", "inputs": map[string]any{"ckpt_name": "model.safetensors"}},
		"5": map[string]any{"class_type": "EmptyLatentImage", "inputs": map[string]any{"width": w, "height": h, "batch_size": 1}},
		"6": map[string]any{"class_type": "CLIPTextEncode", "inputs": map[string]any{"text": prompt, "clip": []any{"4", 1}}},
		"7": map[string]any{"class_type": "CLIPTextEncode", "inputs": map[string]any{"text": negative, "clip": []any{"4", 1}}},
		"8": map[string]any{"class_type": "VAEDecode", "inputs": map[string]any{"samples": []any{"3", 0}, "vae": []any{"4", 2}}},
		"9": map[string]any{"class_type": "SaveImage", "inputs": map[string]any{"filename_prefix": "ComfyUI", "images": []any{"8", 0}}},
	}
}

// bearer sends a request with the token, as Open WebUI's ComfyUI client does, and decodes JSON.
func bearer(t testing.TB, method, u, token string, body any, out any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, u, r)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %d %.300q: %v", method, u, resp.StatusCode, data, err)
		}
	}
	return resp.StatusCode, data
}

// wsMessage is one of ComfyUI's websocket messages.
type wsMessage struct {
	Type string         `json:"type"`
	Data map[string]any `json:"data"`
}

// TestOpenWebUIComfyFlow replays Open WebUI's ComfyUI engine request for request: the websocket
// with its client id and the bearer token, POST /prompt with ComfyUI's default workflow, the
// messages until `executing` with node null, /history/{id}, then /view. The picture is the colour
// channels of `easel generate` with the same prompt, negative prompt, seed, steps, CFG and size,
// as an RGB PNG (SaveImage writes RGB). An image uploaded with /upload/image and started from
// with LoadImage + VAEEncode at denoise 0.6 is `easel generate --init --strength 0.6`'s. A
// workflow with a node type Easel does not understand is refused naming it, and the server goes
// on.
func TestOpenWebUIComfyFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	model := tinyModel(t)
	base, _, _ := listening(t, &jobs.ModelGenerator{Path: model}, serve.Config{Auth: serve.Auth{Token: "tok-9"}})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws?clientId=owui-1",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer tok-9"}}})
	if err != nil {
		t.Fatalf("the websocket: %v", err)
	}
	defer ws.CloseNow()
	read := func() wsMessage {
		for {
			typ, data, err := ws.Read(ctx)
			if err != nil {
				t.Fatalf("reading the websocket: %v", err)
			}
			if typ == websocket.MessageBinary {
				continue // previews
			}
			var m wsMessage
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	if m := read(); m.Type != "status" || m.Data["sid"] != "owui-1" {
		t.Fatalf("first message %+v, want the status with the client id", m)
	}

	var queued struct {
		PromptID   string         `json:"prompt_id"`
		Number     *int           `json:"number"`
		NodeErrors map[string]any `json:"node_errors"`
	}
	wf := comfyDefaultWorkflow("a red apple", "blurry", 5, 2, 3, 64, 64)
	if code, body := bearer(t, "POST", base+"/prompt", "tok-9", map[string]any{"prompt": wf, "client_id": "owui-1"}, &queued); code != 200 || queued.PromptID == "" || queued.Number == nil {
		t.Fatalf("POST /prompt: %d %s", code, body)
	}
	var seen []string
	for {
		m := read()
		if m.Data["prompt_id"] != nil && m.Data["prompt_id"] != queued.PromptID {
			t.Fatalf("a message of another prompt: %+v", m)
		}
		seen = append(seen, m.Type)
		if m.Type == "executing" && m.Data["node"] == nil && m.Data["prompt_id"] == queued.PromptID {
			break
		}
		if m.Type == "execution_error" {
			t.Fatalf("execution_error: %+v", m.Data)
		}
	}
	kinds := strings.Join(seen, " ")
	for _, want := range []string{"execution_start", "executing", "progress", "executed"} {
		if !strings.Contains(kinds, want) {
			t.Errorf("the messages %q have no %s", kinds, want)
		}
	}

	var hist map[string]struct {
		Outputs map[string]struct {
			Images []struct{ Filename, Subfolder, Type string }
		}
		Status struct {
			StatusStr string `json:"status_str"`
			Completed bool
		}
	}
	bearer(t, "GET", base+"/history/"+queued.PromptID, "tok-9", nil, &hist)
	h, ok := hist[queued.PromptID]
	if !ok || !h.Status.Completed || len(h.Outputs["9"].Images) != 1 {
		t.Fatalf("/history/%s: %+v", queued.PromptID, hist)
	}
	im := h.Outputs["9"].Images[0]
	q := url.Values{"filename": {im.Filename}, "subfolder": {im.Subfolder}, "type": {im.Type}}
	code, data := bearer(t, "GET", base+"/view?"+q.Encode(), "tok-9", nil, nil)
	if code != 200 || len(data) < 26 {
		t.Fatalf("/view: %d", code)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "view.png"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, ctype := loadAnswer(t, filepath.Join(dir, "view.png"))
	want := easelGenerate(t, model, "--prompt", "a red apple", "--negative", "blurry", "--cfg", "3", "--size", "64x64", "--seed", "5", "--steps", "2")
	if !sameRGB(got, want) || ctype != 2 {
		t.Errorf("the ComfyUI picture %v (colour type %d) is not easel generate's colours %v as RGB", got.Rect, ctype, want.Rect)
	}

	// img2img as template clients send it: the image uploaded, LoadImage + VAEEncode, denoise.
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	fw, _ := mw.CreateFormFile("image", "start.png")
	start := testPicture(64, 32)
	png.Encode(fw, start)
	mw.Close()
	up, _ := http.NewRequest("POST", base+"/upload/image", &form)
	up.Header.Set("Content-Type", mw.FormDataContentType())
	up.Header.Set("Authorization", "Bearer tok-9")
	upResp, err := http.DefaultClient.Do(up)
	if err != nil {
		t.Fatal(err)
	}
	var uploaded struct{ Name, Type string }
	json.NewDecoder(upResp.Body).Decode(&uploaded)
	upResp.Body.Close()
	if upResp.StatusCode != 200 || uploaded.Name != "start.png" || uploaded.Type != "input" {
		t.Fatalf("/upload/image: %d %+v", upResp.StatusCode, uploaded)
	}
	i2i := comfyDefaultWorkflow("a red apple", "", 6, 2, 1, 64, 64)
	i2i["3"].(map[string]any)["inputs"].(map[string]any)["denoise"] = 0.6
	i2i["3"].(map[string]any)["inputs"].(map[string]any)["latent_image"] = []any{"11", 0}
	i2i["10"] = map[string]any{"class_type": "LoadImage", "inputs": map[string]any{"image": "start.png"}}
	i2i["11"] = map[string]any{"class_type": "VAEEncode", "inputs": map[string]any{"pixels": []any{"10", 0}, "vae": []any{"4", 2}}}
	delete(i2i, "5")
	if code, body := bearer(t, "POST", base+"/prompt", "tok-9", map[string]any{"prompt": i2i, "client_id": "owui-1"}, &queued); code != 200 {
		t.Fatalf("POST /prompt (img2img): %d %s", code, body)
	}
	for m := read(); !(m.Type == "executing" && m.Data["node"] == nil); m = read() {
		if m.Type == "execution_error" {
			t.Fatalf("execution_error: %+v", m.Data)
		}
	}
	bearer(t, "GET", base+"/history/"+queued.PromptID, "tok-9", nil, &hist)
	im = hist[queued.PromptID].Outputs["9"].Images[0]
	_, data = bearer(t, "GET", base+"/view?"+url.Values{"filename": {im.Filename}, "type": {im.Type}}.Encode(), "tok-9", nil, nil)
	if err := os.WriteFile(filepath.Join(dir, "i2i.png"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	writePNG(t, filepath.Join(dir, "start.png"), start)
	got, _ = loadAnswer(t, filepath.Join(dir, "i2i.png"))
	want = easelGenerate(t, model, "--prompt", "a red apple", "--init", filepath.Join(dir, "start.png"), "--strength", "0.6", "--seed", "6", "--steps", "2", "--cfg", "1")
	if !sameRGB(got, want) {
		t.Errorf("the ComfyUI img2img picture %v is not easel generate --init --strength 0.6's %v", got.Rect, want.Rect)
	}

	// A node type Easel does not run: refused at once, named, the server still serving.
	bad := comfyDefaultWorkflow("x", "", 1, 1, 1, 64, 64)
	bad["10"] = map[string]any{"class_type": "LoraLoader", "inputs": map[string]any{"lora_name": "a.safetensors", "model": []any{"4", 0}}}
	var refused struct {
		Error      struct{ Type, Message string }
		NodeErrors map[string]struct {
			ClassType string `json:"class_type"`
		} `json:"node_errors"`
	}
	if code, body := bearer(t, "POST", base+"/prompt", "tok-9", map[string]any{"prompt": bad, "client_id": "owui-1"}, &refused); code != 400 ||
		!strings.Contains(refused.Error.Message, "LoraLoader") || refused.NodeErrors["10"].ClassType != "LoraLoader" {
		t.Errorf("a LoraLoader workflow: %d %s", code, body)
	}
	var info map[string]struct {
		Input struct {
			Required map[string][]any
		}
	}
	bearer(t, "GET", base+"/object_info", "tok-9", nil, &info)
	names := fmt.Sprint(info["CheckpointLoaderSimple"].Input.Required["ckpt_name"])
	if !strings.Contains(names, ".cmf") {
		t.Errorf("object_info's CheckpointLoaderSimple lists %s, not the server's model", names)
	}
	if code, _ := bearer(t, "GET", base+"/system_stats", "tok-9", nil, nil); code != 200 {
		t.Errorf("/system_stats: %d", code)
	}
	if code, _ := bearer(t, "GET", base+"/history", "", nil, nil); code != 401 {
		t.Errorf("without the token: %d, want 401", code)
	}
}
