package serve_test

import (
	"context"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/serve"
	"easel/app/upscalers"
	"easel/internal/golden"
)

// upscalerFolder copies one weight file of every upscale_* case into a folder, named after the
// case's architecture and scale as artists' files are named, and returns the folder and, by
// architecture, a file name and its case.
func upscalerFolder(t *testing.T) (string, map[string]string, map[string]*golden.UpscaleCase) {
	t.Helper()
	cases, err := golden.UpscaleCases()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	names, byArch := map[string]string{}, map[string]*golden.UpscaleCase{}
	for _, c := range cases {
		key := fmt.Sprintf("%sx%d", c.Str("arch"), c.Int("scale"))
		if _, dup := names[key]; dup || c.Channels != 3 {
			continue
		}
		name := "4x-" + strings.TrimPrefix(c.Name, "upscale_")
		name = strings.TrimSuffix(name, ".ref")
		b, err := os.ReadFile(c.Files[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+filepath.Ext(c.Files[0])), b, 0o644); err != nil {
			t.Fatal(err)
		}
		names[key], byArch[key] = name, c
	}
	return dir, names, byArch
}

type extrasAnswer struct {
	Image    string `json:"image"`
	HTMLInfo string `json:"html_info"`
}

// direct is the picture the app's upscaler makes for c at its network's scale.
func direct(t *testing.T, dir, name string, c *golden.UpscaleCase) *image.NRGBA {
	t.Helper()
	e, ok := upscalers.New(dir).Find(name)
	if !ok {
		t.Fatalf("%s is not in the folder", name)
	}
	r, err := upscalers.Open(e.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out, _, err := r.Upscale(context.Background(), c.Input, upscalers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLearnedUpscalers: a folder's upscalers are listed with A1111's fields and their own scale;
// extra-single-image and extra-batch-images with one give the app's picture exactly; the names
// A1111 lists by default use an installed file of their family (or Lanczos) and say so; an
// unknown name is a 422 listing what there is.
func TestLearnedUpscalers(t *testing.T) {
	dir, names, byArch := upscalerFolder(t)
	ts := newTestServer(t, &fakeGen{}, serve.Config{Upscalers: upscalers.New(dir)})
	var ups []map[string]any
	if code := call(t, "GET", ts.URL+"/sdapi/v1/upscalers", nil, &ups); code != 200 {
		t.Fatalf("upscalers: %d", code)
	}
	listed := map[string]map[string]any{}
	for _, u := range ups {
		listed[u["name"].(string)] = u
	}
	for key, name := range names {
		u, ok := listed[name]
		if !ok || int(u["scale"].(float64)) != byArch[key].Int("scale") || u["model_name"] != byArch[key].Str("arch") || !strings.HasPrefix(u["model_path"].(string), dir) {
			t.Fatalf("%s listed as %v (all: %v)", name, u, ups)
		}
	}
	for key, name := range names {
		c := byArch[key]
		want := direct(t, dir, name, c)
		var one extrasAnswer
		if code := call(t, "POST", ts.URL+"/sdapi/v1/extra-single-image", map[string]any{"image": pngBase64(t, c.Input), "upscaler_1": name, "upscaling_resize": c.Int("scale")}, &one); code != 200 {
			t.Fatalf("%s: extra-single-image %d %v", name, code, one)
		}
		got, _ := decodeImage(t, one.Image)
		if string(got.Pix) != string(want.Pix) {
			t.Fatalf("%s: extra-single-image's picture is not the app's", name)
		}
		if worst, _, err := c.U8Diff(got); err != nil || worst > 1 {
			t.Fatalf("%s: %d levels from the reference (%v)", name, worst, err)
		}
		var batch struct {
			Images []string `json:"images"`
		}
		if code := call(t, "POST", ts.URL+"/sdapi/v1/extra-batch-images", map[string]any{"imageList": []map[string]any{{"data": pngBase64(t, c.Input), "name": "a.png"}, {"data": pngBase64(t, c.Input), "name": "b.png"}},
			"upscaler_1": name, "upscaling_resize": c.Int("scale")}, &batch); code != 200 || len(batch.Images) != 2 {
			t.Fatalf("%s: extra-batch-images %d, %d images", name, code, len(batch.Images))
		}
		for _, b := range batch.Images {
			if img, _ := decodeImage(t, b); string(img.Pix) != string(want.Pix) {
				t.Fatalf("%s: extra-batch-images' picture is not the app's", name)
			}
		}
	}
	// A1111's default names.
	substituted := 0
	for key, name := range names {
		c := byArch[key]
		var a1111 string
		switch key {
		case "RRDBNetx4":
			a1111 = "R-ESRGAN 4x+"
		case "SRVGGNetCompactx4":
			a1111 = "R-ESRGAN General 4xV3"
		case "RRDBNetx2":
			a1111 = "R-ESRGAN 2x+"
		default:
			continue
		}
		var one extrasAnswer
		if code := call(t, "POST", ts.URL+"/sdapi/v1/extra-single-image", map[string]any{"image": pngBase64(t, c.Input), "upscaler_1": a1111, "upscaling_resize": c.Int("scale")}, &one); code != 200 {
			t.Fatalf("%s: %d %v", a1111, code, one)
		}
		got, _ := decodeImage(t, one.Image)
		if string(got.Pix) != string(direct(t, dir, name, c).Pix) || !strings.Contains(one.HTMLInfo, name) || !strings.Contains(one.HTMLInfo, "not installed") {
			t.Fatalf("%s did not use %s and say so: %q", a1111, name, one.HTMLInfo)
		}
		substituted++
	}
	if substituted == 0 {
		t.Fatalf("no case of a family A1111 names by default (%v)", names)
	}
	var c *golden.UpscaleCase
	for _, v := range byArch {
		c = v
	}
	var one extrasAnswer
	if code := call(t, "POST", ts.URL+"/sdapi/v1/extra-single-image", map[string]any{"image": pngBase64(t, c.Input), "upscaler_1": "SwinIR_4x", "upscaling_resize": 2}, &one); code != 200 || !strings.Contains(one.HTMLInfo, "Lanczos was used") {
		t.Fatalf("SwinIR_4x: %d %q", code, one.HTMLInfo)
	}
	if got, _ := decodeImage(t, one.Image); got.Rect.Dx() != 2*c.Input.Rect.Dx() {
		t.Fatalf("SwinIR_4x ×2 gave %v", got.Rect)
	}
	var bad map[string]any
	if code := call(t, "POST", ts.URL+"/sdapi/v1/extra-single-image", map[string]any{"image": pngBase64(t, c.Input), "upscaler_1": "4x-Nonexistent"}, &bad); code != 422 {
		t.Fatalf("an unknown upscaler: %d %v", code, bad)
	}
}
