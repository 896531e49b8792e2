package serve_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/cli"
	"easel/engine/imageio"

	"easel/app/compose"
	"easel/app/imagework"
	"easel/app/jobs"
	"easel/app/serve"
	"easel/engine/pipeline"
)

// testPicture is a small picture with structure (a gradient and a square).
func testPicture(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := color.NRGBA{uint8(x * 255 / w), uint8(y * 255 / h), 128, 255}
			if x > w/4 && x < w/2 && y > h/4 && y < h/2 {
				c = color.NRGBA{240, 20, 20, 255}
			}
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}

// TestImg2imgWithMaskMatchesTheWindowsRun: on the tiny model, img2img with an init image, a mask
// (left half repaints) and A1111's mask_blur returns the image the app's own path makes — the
// init image prepared as the window prepares it (app/imagework), the run through the same queue
// generator, the result pasted back through the mask — bit for bit; the kept half is the
// original's pixels.
func TestImg2imgWithMaskMatchesTheWindowsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	model := tinyModel(t)
	init := testPicture(64, 64)
	mask := image.NewNRGBA(image.Rect(0, 0, 64, 64))
	for y := range 64 {
		for x := range 64 {
			v := uint8(0)
			if x < 32 {
				v = 255
			}
			mask.SetNRGBA(x, y, color.NRGBA{v, v, v, 255})
		}
	}
	ts := newTestServer(t, &jobs.ModelGenerator{Path: model}, serve.Config{Model: model})
	var resp genResponse
	if code := call(t, "POST", ts.URL+"/sdapi/v1/img2img", map[string]any{"easel_alpha": true, "init_images": []string{pngBase64(t, init)}, "mask": pngBase64(t, mask),
		"mask_blur": 2, "inpaint_full_res": false, "prompt": "a red square", "steps": 3, "seed": 5, "denoising_strength": 0.6}, &resp); code != 200 {
		t.Fatalf("img2img: %d %.300s", code, resp.Info)
	}
	got, _ := decodeImage(t, resp.Images[0])

	prep, err := imagework.Prepare(init, imagework.Options{Multiple: 32, MaskBlur: 2, KeepOriginal: true, Mask: imagework.MaskFromImage(mask)})
	if err != nil {
		t.Fatal(err)
	}
	d := compose.Draft{Prompt: "a red square", Steps: 3, Size: compose.SizeExact, CustomW: prep.Width, CustomH: prep.Height, Model: model}
	req, err := d.Request(5)
	if err != nil {
		t.Fatal(err)
	}
	req.Init = &pipeline.InitImage{Image: prep.Init, Strength: 0.6, Mask: prep.Mask}
	gen := &jobs.ModelGenerator{Path: model}
	defer gen.Close()
	events := make(chan pipeline.Event, 64)
	go func() {
		for range events {
		}
	}()
	res, err := gen.Run(context.Background(), req, events)
	if err != nil {
		t.Fatal(err)
	}
	want, err := prep.Finish(res.Image)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Pix, want.Pix) {
		t.Error("the API's img2img image differs from the app's own run of the same request")
	}
	for y := range 64 {
		for x := 40; x < 64; x++ {
			if got.NRGBAAt(x, y) != init.NRGBAAt(x, y) {
				t.Fatalf("kept pixel (%d,%d) is %v, the original's %v", x, y, got.NRGBAAt(x, y), init.NRGBAAt(x, y))
			}
		}
	}
	info := resp.info(t)
	if fmt.Sprint(info["denoising_strength"]) != "0.6" {
		t.Errorf("info denoising_strength %v", info["denoising_strength"])
	}
}

// TestImg2imgFields: denoising_strength defaults to A1111's 0.75; a mask without an init image,
// an all-black mask and denoising_strength 0 are 422s naming the field; an inverted mask repaints
// the other side.
func TestImg2imgFields(t *testing.T) {
	gen := &fakeGen{}
	ts := newTestServer(t, gen, serve.Config{})
	init := pngBase64(t, testPicture(64, 32))
	black := pngBase64(t, image.NewGray(image.Rect(0, 0, 64, 32)))
	var resp genResponse
	if code := call(t, "POST", ts.URL+"/sdapi/v1/img2img", map[string]any{"init_images": []string{init}, "steps": 2}, &resp); code != 200 {
		t.Fatalf("%d", code)
	}
	r := gen.requests()[0]
	if r.Init == nil || r.Init.Strength != 0.75 || r.Width != 64 || r.Height != 32 || r.Init.Mask != nil {
		t.Errorf("request init %+v, %dx%d; want strength 0.75 at the init image's 64x32", r.Init, r.Width, r.Height)
	}
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"mask": black}, "mask"},
		{map[string]any{"init_images": []string{init}, "mask": black}, "mask"},
		{map[string]any{"init_images": []string{init}, "denoising_strength": 0}, "denoising_strength"},
		{map[string]any{"init_images": []string{init}, "denoising_strength": 1.5}, "denoising_strength"},
		{map[string]any{"init_images": []string{"%%%"}}, "init_images"},
	} {
		var e struct{ Detail []map[string]any }
		if code := call(t, "POST", ts.URL+"/sdapi/v1/img2img", c.body, &e); code != 422 || len(e.Detail) == 0 || !strings.Contains(fmt.Sprint(e.Detail[0]["loc"]), c.field) {
			t.Errorf("%v: %d %v; want a 422 on %s", c.body["denoising_strength"], code, e.Detail, c.field)
		}
	}
	if code := call(t, "POST", ts.URL+"/sdapi/v1/img2img", map[string]any{"init_images": []string{init}, "mask": black, "inpainting_mask_invert": 1, "inpaint_full_res": false}, &resp); code != 200 {
		t.Errorf("an inverted black mask (all repaints): %d %.200s", code, resp.Info)
	}
}

// TestImg2imgWithMaskMatchesTheCLI: img2img with an init image, a mask, mask_blur and
// denoising_strength returns the image `easel generate --init --mask --mask-blur --strength`
// (with --mask-grow 0: A1111 does not grow the mask)
// makes with the same settings, bit for bit.
func TestImg2imgWithMaskMatchesTheCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	model := tinyModel(t)
	dir := t.TempDir()
	init := testPicture(64, 96)
	mask := image.NewNRGBA(image.Rect(0, 0, 64, 96))
	for y := range 96 {
		for x := range 64 {
			v := uint8(0)
			if y > 40 {
				v = 255
			}
			mask.SetNRGBA(x, y, color.NRGBA{v, v, v, 255})
		}
	}
	initPath, maskPath, out := filepath.Join(dir, "init.png"), filepath.Join(dir, "mask.png"), filepath.Join(dir, "cli.png")
	for path, img := range map[string]image.Image{initPath: init, maskPath: mask} {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		png.Encode(f, img)
		f.Close()
	}
	var stdout, stderr bytes.Buffer
	if c := cli.Run([]string{"generate", "--model", model, "--prompt", "a red square", "--init", initPath, "--mask", maskPath,
		"--mask-blur", "2", "--mask-grow", "0", "--strength", "0.6", "--steps", "3", "--seed", "5", "--out", out}, &stdout, &stderr); c != 0 {
		t.Fatalf("easel generate: exit %d: %s", c, stderr.String())
	}
	want, err := imageio.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, &jobs.ModelGenerator{Path: model}, serve.Config{Model: model})
	var resp genResponse
	if code := call(t, "POST", ts.URL+"/sdapi/v1/img2img", map[string]any{"easel_alpha": true, "init_images": []string{pngBase64(t, init)}, "mask": pngBase64(t, mask),
		"mask_blur": 2, "inpaint_full_res": false, "prompt": "a red square", "steps": 3, "seed": 5, "denoising_strength": 0.6}, &resp); code != 200 {
		t.Fatalf("img2img: %d %.300s", code, resp.Info)
	}
	got, _ := decodeImage(t, resp.Images[0])
	if got.Rect != want.Rect || !bytes.Equal(got.Pix, want.Pix) {
		t.Errorf("the API's img2img image (%v) differs from easel generate's (%v)", got.Rect, want.Rect)
	}
}
