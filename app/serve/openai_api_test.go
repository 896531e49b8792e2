package serve_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/jpeg"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"easel/app/serve"
	"easel/engine/imageio"
)

// openAIError is OpenAI's error body.
type openAIError struct {
	Error struct {
		Message, Type string
		Param, Code   *string
	}
}

// TestOpenAIFormatsURLsAndRefusals: WebP answers are lossless and keep the alpha with
// background "transparent"; n images come with consecutive seeds; response_format "url" answers
// links that work without credentials, and a made-up one is OpenAI's 404; without the token, an
// unknown route and a mask of another size get OpenAI's error shape; GET /v1/models lists the
// model.
func TestOpenAIFormatsURLsAndRefusals(t *testing.T) {
	gen := &alphaGen{}
	url, _, _ := listening(t, gen, serve.Config{Auth: serve.Auth{Token: "tok-1"}})
	var e openAIError
	if code, _ := bearer(t, "POST", url+"/v1/images/generations", "wrong", map[string]any{"prompt": "x"}, &e); code != 401 || e.Error.Code == nil || *e.Error.Code != "invalid_api_key" {
		t.Errorf("a wrong key: %d %+v", code, e)
	}
	var resp struct {
		Data []struct {
			B64 string `json:"b64_json"`
			URL string
		}
		Background   string
		OutputFormat string `json:"output_format"`
	}
	code, body := bearer(t, "POST", url+"/v1/images/generations", "tok-1", map[string]any{"prompt": "abc", "size": "32x32", "seed": 300,
		"n": 2, "background": "transparent", "output_format": "webp"}, &resp)
	if code != 200 || len(resp.Data) != 2 {
		t.Fatalf("webp: %d %.300s", code, body)
	}
	for i, d := range resp.Data {
		data, _ := base64.StdEncoding.DecodeString(d.B64)
		img, err := imageio.Decode(data, "answer.webp")
		if err != nil {
			t.Fatalf("image %d is not a WebP: %v", i, err)
		}
		sd := 300 + i
		if img.Rect.Dx() != 32 || img.Pix[0] != byte(sd) || img.Pix[1] != byte(sd>>8) || img.Pix[2] != 3 || img.Pix[3] != 128 {
			t.Errorf("image %d: %v pixel %v, want seed %d's colour with alpha 128", i, img.Rect, img.Pix[:4], sd)
		}
	}
	code, body = bearer(t, "POST", url+"/v1/images/generations", "tok-1", map[string]any{"prompt": "abc", "size": "32x32",
		"output_format": "jpeg", "output_compression": 80, "response_format": "url"}, &resp)
	if code != 200 || len(resp.Data) != 1 || !strings.HasPrefix(resp.Data[0].URL, url+"/v1/images/files/") {
		t.Fatalf("url: %d %.300s", code, body)
	}
	got, err := http.Get(resp.Data[0].URL) // no credentials: the URL is the capability
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(got.Body)
	got.Body.Close()
	if img, err := jpeg.Decode(bytes.NewReader(data)); got.StatusCode != 200 || err != nil || img.Bounds().Dx() != 32 {
		t.Errorf("fetching the URL: %d %v", got.StatusCode, err)
	}
	if code, _ := bearer(t, "GET", url+"/v1/images/files/0123456789abcdef0123456789abcdef.png", "", nil, &e); code != 404 || e.Error.Type != "invalid_request_error" {
		t.Errorf("a made-up URL: %d %+v", code, e)
	}
	if code, _ := bearer(t, "GET", url+"/v1/chat/completions", "tok-1", nil, &e); code != 404 || e.Error.Message == "" {
		t.Errorf("an unknown route: %d %+v", code, e)
	}
	var models struct{ Data []struct{ ID string } }
	if bearer(t, "GET", url+"/v1/models", "tok-1", nil, &models); len(models.Data) == 0 {
		t.Errorf("no models listed")
	}

	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	mw.WriteField("prompt", "a door")
	for name, size := range map[string]int{"image": 32, "mask": 64} {
		fw, _ := mw.CreateFormFile(name, name+".png")
		var buf bytes.Buffer
		writePNGTo(t, &buf, testPicture(size, size))
		fw.Write(buf.Bytes())
	}
	mw.Close()
	req, _ := http.NewRequest("POST", url+"/v1/images/edits", &form)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer tok-1")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(r.Body).Decode(&e)
	r.Body.Close()
	if r.StatusCode != 400 || e.Error.Param == nil || *e.Error.Param != "mask" {
		t.Errorf("a mask of another size: %d %+v", r.StatusCode, e)
	}
	if code, _ := bearer(t, "POST", url+"/v1/images/generations", "tok-1", map[string]any{"prompt": "abc", "size": "32x32"}, nil); code != 200 {
		t.Errorf("after the refusals: %d", code)
	}
}

func writePNGTo(t *testing.T, w io.Writer, img image.Image) {
	t.Helper()
	if _, err := w.Write([]byte(pngBytes(t, img))); err != nil {
		t.Fatal(err)
	}
}

func pngBytes(t *testing.T, img image.Image) string {
	b, _ := base64.StdEncoding.DecodeString(pngBase64(t, img))
	return string(b)
}
