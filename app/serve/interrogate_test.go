package serve_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"strings"
	"testing"

	"easel/app/serve"
	"easel/app/textgen"
	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/engine/imageio"
	"easel/engine/ml/cpu"
	"easel/engine/qwen3vl"
	"easel/internal/generatecase"
	"easel/internal/tinymodel"
	"easel/internal/tinysnapshot"
)

// /sdapi/v1/interrogate answers A1111's request (a data URL or bare base64, any "model") with
// the caption Describe writes for the image on the current model; bad images are 422, a model
// file without the language head 501 with the sentence that says how to get it.
func TestInterrogateDescribesTheImage(t *testing.T) {
	model := generatecase.Model(t, tinysnapshot.Permutation{A: 7907, B: 5}, convert.ProfileCortiq)
	ts := newTestServer(t, &fakeGen{}, serve.Config{Model: model})
	path := generatecase.PicturePNG(t, 96, 64)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// What Describe writes for the image, greedily, on the CPU.
	f, err := cmf.Open(model)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc, err := qwen3vl.NewEncoder(cpu.New(), f)
	if err != nil {
		t.Fatal(err)
	}
	w, err := textgen.New(f, enc)
	if err != nil {
		t.Fatal(err)
	}
	img, err := imageio.Decode(raw, path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := w.Describe(context.Background(), img, "", textgen.Options{MaxTokens: 200})
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(raw)
	for _, body := range []map[string]any{
		{"image": "data:image/png;base64," + b64, "model": "clip"},
		{"image": b64, "model": "deepdanbooru"},
	} {
		var got struct {
			Caption string `json:"caption"`
		}
		if code := call(t, "POST", ts.URL+"/sdapi/v1/interrogate", body, &got); code != http.StatusOK || got.Caption != want.Text || got.Caption == "" {
			t.Errorf("interrogate (%v): %d, caption %q, want %q", body["model"], code, got.Caption, want.Text)
		}
	}
	var detail map[string]any
	for _, body := range []map[string]any{{"image": base64.StdEncoding.EncodeToString([]byte("not a picture"))}, {"image": "%%%"}, {"model": "clip"}} {
		if code := call(t, "POST", ts.URL+"/sdapi/v1/interrogate", body, &detail); code != http.StatusUnprocessableEntity {
			t.Errorf("interrogate %v: %d %v, want 422", body, code, detail)
		}
	}

	old := newTestServer(t, &fakeGen{}, serve.Config{Model: tinymodel.WithoutHead(t, convert.Options{Profile: convert.ProfileCortiq})})
	code := call(t, "POST", old.URL+"/sdapi/v1/interrogate", map[string]any{"image": b64}, &detail)
	if msg, _ := detail["detail"].(string); code != http.StatusNotImplemented || !strings.Contains(msg, "easel convert") {
		t.Errorf("interrogate on a file without the head: %d %v", code, detail)
	}
}
