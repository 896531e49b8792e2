package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeUpscalersFolder: `easel serve --upscalers DIR` on loopback lists DIR's file in
// /sdapi/v1/upscalers, and extra-single-image with it answers the picture `easel upscale` writes.
func TestServeUpscalersFolder(t *testing.T) {
	c := byInput(t, false)
	model := tinyCMF(t)
	dir := t.TempDir()
	lib := filepath.Join(dir, "upscalers")
	os.Mkdir(lib, 0o755)
	name := "4x-Test"
	b, _ := os.ReadFile(c.Files[0])
	os.WriteFile(filepath.Join(lib, name+filepath.Ext(c.Files[0])), b, 0o644)
	in := writePNG(t, dir, "in.png", c.Input)
	cliOut := filepath.Join(dir, "cli.png")
	if code, _, stderr := run("upscale", "--model", name, "--upscalers", lib, "--backend", "cpu", in, "--out", cliOut); code != ExitOK {
		t.Fatalf("easel upscale: exit %d: %s", code, stderr)
	}
	want := readPNG(t, cliOut)

	a, stop := startServe(t, "--listen", "127.0.0.1:0", "--model", model, "--backend", "cpu", "--no-save", "--upscalers", lib)
	base := "http://" + a
	resp, err := http.Get(base + "/sdapi/v1/upscalers")
	if err != nil {
		t.Fatal(err)
	}
	var ups []map[string]any
	json.NewDecoder(resp.Body).Decode(&ups)
	resp.Body.Close()
	found := false
	for _, u := range ups {
		if u["name"] == name && int(u["scale"].(float64)) == c.Int("scale") {
			found = true
		}
	}
	if !found {
		t.Fatalf("/sdapi/v1/upscalers does not list %s: %v", name, ups)
	}
	var src bytes.Buffer
	png.Encode(&src, c.Input)
	body, _ := json.Marshal(map[string]any{"image": base64.StdEncoding.EncodeToString(src.Bytes()), "upscaler_1": name, "upscaling_resize": c.Int("scale")})
	resp, err = http.Post(base+"/sdapi/v1/extra-single-image", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var ans struct {
		Image    string `json:"image"`
		HTMLInfo string `json:"html_info"`
	}
	json.NewDecoder(resp.Body).Decode(&ans)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(ans.HTMLInfo, name) {
		t.Fatalf("extra-single-image: %d %q", resp.StatusCode, ans.HTMLInfo)
	}
	raw, _ := base64.StdEncoding.DecodeString(ans.Image)
	os.WriteFile(filepath.Join(dir, "api.png"), raw, 0o644)
	got := readPNG(t, filepath.Join(dir, "api.png"))
	if got.Rect != want.Rect || string(got.Pix) != string(want.Pix) {
		t.Fatalf("extra-single-image gives another picture (%v) than easel upscale (%v)", got.Rect, want.Rect)
	}
	stop()
}
