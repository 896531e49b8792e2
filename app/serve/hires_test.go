package serve_test

import (
	"context"
	"image"
	"strings"
	"testing"

	"github.com/disintegration/imaging"

	"easel/app/serve"
	"easel/app/upscalers"
)

// TestTxt2imgHires: enable_hr runs a second pass over the first pass's picture upscaled by
// hr_upscaler (a learned upscaler of the folder: the network, then Lanczos to hr_scale × the size),
// at denoising_strength for hr_second_pass_steps with the same seed; the answer is the larger
// picture and its parameters name the upscaler. A1111's default "Latent" and an absent
// hr_upscaler use Lanczos (the first said); an unknown name is a 422.
func TestTxt2imgHires(t *testing.T) {
	dir, names, _ := upscalerFolder(t)
	name, ok := names["RRDBNetx4"]
	if !ok {
		for _, n := range names {
			name = n
		}
	}
	gen := &fakeGen{}
	ts := newTestServer(t, gen, serve.Config{Upscalers: upscalers.New(dir)})
	const prompt = "a lighthouse at dusk"
	first := image.NewNRGBA(image.Rect(0, 0, 64, 64)) // the fake generator's picture for seed 7
	for i := 0; i < len(first.Pix); i += 4 {
		first.Pix[i], first.Pix[i+1], first.Pix[i+2], first.Pix[i+3] = 7, 0, byte(len(prompt)), 255
	}
	e, _ := upscalers.New(dir).Find(name)
	r, err := upscalers.Open(e.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	learned, _, err := r.Upscale(context.Background(), first, upscalers.Request{Width: 128, Height: 128})
	if err != nil {
		t.Fatal(err)
	}
	lanczos := imaging.Resize(first, 128, 128, imaging.Lanczos)
	for _, tc := range []struct {
		upscaler string // "" leaves hr_upscaler out
		want     *image.NRGBA
		warning  string
		recorded string
	}{
		{name, learned, "", name},
		{"Latent", lanczos, "Lanczos was used", "Lanczos"},
		{"", lanczos, "", "Lanczos"},
	} {
		before := len(gen.requests())
		body := map[string]any{"prompt": prompt, "width": 64, "height": 64, "steps": 4, "seed": 7, "enable_hr": true, "hr_scale": 2,
			"denoising_strength": 0.5, "hr_second_pass_steps": 6}
		if tc.upscaler != "" {
			body["hr_upscaler"] = tc.upscaler
		}
		var g genResponse
		if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", body, &g); code != 200 || len(g.Images) != 1 {
			t.Fatalf("%q: %d, %d images", tc.upscaler, code, len(g.Images))
		}
		img, _ := decodeImage(t, g.Images[0])
		if img.Rect.Dx() != 128 || img.Rect.Dy() != 128 {
			t.Fatalf("%q: the answer is %v, want the second pass's 128×128", tc.upscaler, img.Rect)
		}
		reqs := gen.requests()[before:]
		if len(reqs) != 2 || reqs[1].Init == nil || reqs[1].Seed != 7 || reqs[1].Steps != 6 || reqs[1].Init.Strength != 0.5 {
			t.Fatalf("%q: %d requests, the second %+v", tc.upscaler, len(reqs), reqs[len(reqs)-1])
		}
		got := reqs[1].Init.Image
		if got.Rect.Dx() != 128 || string(got.Pix) != string(tc.want.Pix) {
			t.Fatalf("%q: the second pass did not start from the expected upscale (%v)", tc.upscaler, got.Rect)
		}
		info := g.info(t)
		infotexts, _ := info["infotexts"].([]any)
		if len(infotexts) != 1 || !strings.Contains(infotexts[0].(string), "Hires upscaler: "+tc.recorded) || !strings.Contains(infotexts[0].(string), "Size: 64x64") {
			t.Fatalf("%q: infotexts %v", tc.upscaler, infotexts)
		}
		warnings, _ := info["warnings"].([]any)
		said := false
		for _, w := range warnings {
			said = said || strings.Contains(w.(string), "hr_upscaler")
			if tc.warning != "" && strings.Contains(w.(string), tc.warning) {
				said = true
			}
		}
		if said != (tc.warning != "") {
			t.Fatalf("%q: warnings %v", tc.upscaler, warnings)
		}
	}
	var bad map[string]any
	if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"prompt": prompt, "width": 64, "height": 64, "enable_hr": true, "hr_upscaler": "4x-Nothing"}, &bad); code != 422 {
		t.Fatalf("an unknown hr_upscaler: %d %v", code, bad)
	}
}
