package serve_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"easel/app/cli"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/serve"
	"easel/engine/imageio"
)

// xyzArgs is script_args in A1111's order: x_type, x_values, x_values_dropdown, y_…, z_…,
// draw_legend, include_lone_images, include_sub_grids, no_fixed_seeds, margin_size, csv_mode,
// raw_mode.
func xyzArgs(xt int, xv string, yt int, yv string, zt int, zv string, lone bool) []any {
	return []any{xt, xv, []string{}, yt, yv, []string{}, zt, zv, []string{}, true, lone, false, false, 0, false, false}
}

// TestXYZPlotTxt2img: A1111's X/Y/Z plot over Seed (type 1) and Steps (type 4) with a Sampler Z
// axis (type 9 in txt2img, which Easel lacks) returns the grid first, then the 4 cells (with
// include_lone_images), each the image `easel generate` makes with its seed and steps, bit for
// bit; the grid records its axes; the Sampler axis is named in info.warnings.
func TestXYZPlotTxt2img(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	model := tinyModel(t)
	ts := newTestServer(t, &jobs.ModelGenerator{Path: model}, serve.Config{Model: model})
	var resp genResponse
	code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"easel_alpha": true,
		"prompt": "a red apple", "width": 64, "height": 64, "steps": 3, "seed": 5, "cfg_scale": 1,
		"script_name": "X/Y/Z plot", "script_args": xyzArgs(1, "1-2", 4, "2, 3", 9, "Euler, DDIM", true)}, &resp)
	if code != 200 {
		t.Fatalf("txt2img x/y/z plot: %d %+v", code, resp)
	}
	if len(resp.Images) != 5 {
		t.Fatalf("%d images, want the grid and 4 cells", len(resp.Images))
	}
	gridImg, data := decodeImage(t, resp.Images[0])
	m, err := imagefile.Read(bytes.NewReader(data), "grid")
	if err != nil || m.Settings == nil || m.Settings.Grid == nil || len(m.Settings.Grid.Axes) != 2 ||
		m.Settings.Grid.Axes[0].Name != "seed" || !slices.Equal(m.Settings.Grid.Axes[1].Values, []string{"2", "3"}) {
		t.Fatalf("the first image is not the grid with its axes: %+v (%v)", m, err)
	}
	if gridImg.Rect.Dx() <= 2*64 || gridImg.Rect.Dy() <= 2*64 {
		t.Errorf("the grid is %v, smaller than its cells and labels", gridImg.Rect)
	}
	info := resp.info(t)
	if ws := fmt.Sprint(info["warnings"]); !strings.Contains(ws, `the Z axis's type "Sampler" is not available in Easel`) || strings.Contains(ws, "scripts are not available") {
		t.Errorf("warnings %v", ws)
	}
	for i, c := range []struct{ seed, steps string }{{"1", "2"}, {"2", "2"}, {"1", "3"}, {"2", "3"}} {
		out := filepath.Join(t.TempDir(), "cli.png")
		var stdout, stderr bytes.Buffer
		if code := cli.Run([]string{"generate", "--model", model, "--prompt", "a red apple", "--cfg", "1", "--size", "64x64",
			"--steps", c.steps, "--seed", c.seed, "--out", out}, &stdout, &stderr); code != 0 {
			t.Fatalf("easel generate: exit %d: %s", code, stderr.String())
		}
		want, err := imageio.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := decodeImage(t, resp.Images[1+i])
		if !bytes.Equal(got.Pix, want.Pix) {
			t.Errorf("cell %d (seed %s, steps %s) differs from easel generate's", i+1, c.seed, c.steps)
		}
	}
}

// TestXYZPlotImg2imgDenoising: in img2img the types count img2img's options (Denoising is 22), a
// strength axis of two values makes two cells recording their strengths; without
// include_lone_images only the grid comes back.
func TestXYZPlotImg2imgDenoising(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	model := tinyModel(t)
	ts := newTestServer(t, &jobs.ModelGenerator{Path: model}, serve.Config{Model: model})
	body := map[string]any{"prompt": "a red apple", "init_images": []string{pngBase64(t, testPicture(64, 64))}, "steps": 2, "seed": 3,
		"script_name": "x/y/z plot", "script_args": xyzArgs(22, "0.5,1", 0, "", 0, "", false)}
	var resp genResponse
	if code := call(t, "POST", ts.URL+"/sdapi/v1/img2img", body, &resp); code != 200 {
		t.Fatalf("img2img x/y/z plot: %d %+v", code, resp)
	}
	if len(resp.Images) != 1 {
		t.Fatalf("%d images, want the grid alone", len(resp.Images))
	}
	_, data := decodeImage(t, resp.Images[0])
	m, err := imagefile.Read(bytes.NewReader(data), "grid")
	if err != nil || m.Settings.Grid == nil || m.Settings.Grid.Axes[0].Name != "strength" || !slices.Equal(m.Settings.Grid.Axes[0].Values, []string{"0.5", "1"}) {
		t.Fatalf("grid %+v (%v)", m.Settings, err)
	}
	texts, _ := resp.info(t)["infotexts"].([]any)
	if len(texts) != 2 || !strings.Contains(fmt.Sprint(texts[0]), "Denoising strength: 0.5") || !strings.Contains(fmt.Sprint(texts[1]), "Denoising strength: 1") {
		t.Errorf("the cells' infotexts %v", texts)
	}
}

// Bad script_args are 422s naming script_args, with what to do.
func TestXYZPlotBadArgs(t *testing.T) {
	ts := newTestServer(t, &fakeGen{}, serve.Config{})
	for _, c := range []struct {
		args any
		want string
	}{
		{"seed", "script_args must be a list"},
		{xyzArgs(99, "1", 0, "", 0, "", false), "script_args x_type 99: txt2img's axis types are 0 to"},
		{xyzArgs(1, "", 0, "", 0, "", false), "the X axis (Seed) has no values"},
		{xyzArgs(4, "0,3", 0, "", 0, "", false), "grid axis X steps"},
		{xyzArgs(7, "cat,dog", 0, "", 0, "", false), `the first value "cat" is not in the prompt`},
	} {
		var resp map[string]any
		code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"prompt": "an apple", "script_name": "X/Y/Z plot", "script_args": c.args}, &resp)
		if code != 422 || !strings.Contains(fmt.Sprint(resp["detail"]), c.want) || !strings.Contains(fmt.Sprint(resp["detail"]), "script_args") {
			t.Errorf("%v: %d %v; want 422 with %q", c.args, code, resp, c.want)
		}
	}
}

// With a Z axis and include_sub_grids the answer is the titled Z grids side by side, then each Z
// grid, then the cells: 1 + 2 + 4 images.
func TestXYZPlotZAxisSubGrids(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	model := tinyModel(t)
	ts := newTestServer(t, &jobs.ModelGenerator{Path: model}, serve.Config{Model: model})
	args := xyzArgs(1, "1,2", 0, "", 6, "1,2", true)
	args[11] = true // include_sub_grids
	var resp genResponse
	code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"prompt": "a red apple", "width": 64, "height": 64, "steps": 2, "seed": 5,
		"script_name": "x/y/z plot", "script_args": args}, &resp)
	if code != 200 || len(resp.Images) != 7 {
		t.Fatalf("%d with %d images; want 200 with 7", code, len(resp.Images))
	}
	main, _ := decodeImage(t, resp.Images[0])
	for z := range 2 {
		sub, data := decodeImage(t, resp.Images[1+z])
		m, err := imagefile.Read(bytes.NewReader(data), "sub-grid")
		if err != nil || m.Settings.Grid == nil || m.Settings.Grid.Z != "cfg="+fmt.Sprint(z+1) {
			t.Errorf("sub-grid %d: %+v (%v)", z+1, m.Settings, err)
		}
		if main.Rect.Dx() != 2*sub.Rect.Dx() || main.Rect.Dy() <= sub.Rect.Dy() {
			t.Errorf("the main grid %v does not hold the two sub-grids %v under titles", main.Rect, sub.Rect)
		}
	}
}
