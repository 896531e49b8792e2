package serve_test

import (
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/cli"
	"easel/app/imagefile"
	"easel/app/serve"
	"easel/engine/cmf"
	"easel/engine/imageio"
	"easel/engine/ml/cpu"
	"easel/engine/pipeline"
	"easel/engine/pipeline/pipelinetest"
)

// watchedServer serves the tiny model through a CPU pipeline whose denoiser watch observes.
func watchedServer(t *testing.T, watch *pipelinetest.Watch) *testServer {
	t.Helper()
	model := tinyModel(t)
	f, err := cmf.Open(model)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	p, err := pipeline.New(f, cpu.New(), pipelinetest.WatchDenoiser(pipeline.Options{}, watch))
	if err != nil {
		t.Fatal(err)
	}
	return newTestServer(t, p, serve.Config{Model: model})
}

// cliImage is what `easel generate` makes of the tiny model with seed and steps.
func cliImage(t *testing.T, prompt string, sd uint64, steps int) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "cli.png")
	var stdout, stderr bytes.Buffer
	if code := cli.Run([]string{"generate", "--model", tinyModel(t), "--prompt", prompt, "--cfg", "1", "--size", "64x64",
		"--steps", fmt.Sprint(steps), "--seed", fmt.Sprint(sd), "--out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("easel generate: exit %d: %s", code, stderr.String())
	}
	img, err := imageio.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	return img.Pix
}

// TestXYZPlotPrefillsOnce: A1111's X/Y/Z plot over Seed × Steps is one queued job over one
// prefill (no CFG: one program), and answers with the grid first, then the four cells, each the
// image `easel generate` makes with its seed and steps, bit for bit.
func TestXYZPlotPrefillsOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	watch := &pipelinetest.Watch{}
	ts := watchedServer(t, watch)
	var resp genResponse
	code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"easel_alpha": true,
		"prompt": "a red apple", "width": 64, "height": 64, "steps": 3, "seed": 5, "cfg_scale": 1,
		"script_name": "x/y/z plot", "script_args": xyzArgs(1, "1-2", 4, "2, 3", 0, "", true)}, &resp)
	if code != 200 || len(resp.Images) != 5 {
		t.Fatalf("txt2img x/y/z plot: %d with %d images; want 200 with the grid and 4 cells", code, len(resp.Images))
	}
	if n := watch.Prefills(); n != 1 {
		t.Errorf("%d prefills for a grid of one prompt; want 1", n)
	}
	if n := len(ts.Queue.Jobs()); n != 1 {
		t.Errorf("%d queued jobs for the grid; want 1 (its cells over one prefill)", n)
	}
	_, data := decodeImage(t, resp.Images[0])
	if m, err := imagefile.Read(bytes.NewReader(data), "grid"); err != nil || m.Settings == nil || m.Settings.Grid == nil {
		t.Fatalf("the first image is not the grid: %+v (%v)", m, err)
	}
	for i, c := range []struct {
		seed  uint64
		steps int
	}{{1, 2}, {2, 2}, {1, 3}, {2, 3}} {
		got, data := decodeImage(t, resp.Images[1+i])
		if !bytes.Equal(got.Pix, cliImage(t, "a red apple", c.seed, c.steps)) {
			t.Errorf("cell %d (seed %d, steps %d) differs from easel generate's", i+1, c.seed, c.steps)
		}
		m, err := imagefile.Read(bytes.NewReader(data), "cell")
		if err != nil || m.Settings == nil || m.Settings.Seed != c.seed || m.Settings.Steps != c.steps {
			t.Errorf("cell %d's settings %+v (%v); want seed %d, steps %d", i+1, m.Settings, err, c.seed, c.steps)
		}
	}
}

// TestXYZPlotVariationCells: a Var. strength axis runs over one prefill too, each cell the
// variation the request's subseed makes at its strength (the noise A1111's seeds give, as a
// single request with that subseed_strength draws it).
func TestXYZPlotVariationCells(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	watch := &pipelinetest.Watch{}
	ts := watchedServer(t, watch)
	body := map[string]any{"prompt": "a red apple", "width": 64, "height": 64, "steps": 2, "seed": 5, "subseed": 9, "cfg_scale": 1}
	grid := map[string]any{"script_name": "x/y/z plot", "script_args": xyzArgs(3, "0.25, 0.5", 0, "", 0, "", true)}
	for k, v := range body {
		grid[k] = v
	}
	var resp genResponse
	if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", grid, &resp); code != 200 || len(resp.Images) != 3 {
		t.Fatalf("%d with %d images; want 200 with the grid and 2 cells", code, len(resp.Images))
	}
	if n := watch.Prefills(); n != 1 {
		t.Errorf("%d prefills; want 1", n)
	}
	for i, strength := range []float64{0.25, 0.5} {
		one := map[string]any{"subseed_strength": strength}
		for k, v := range body {
			one[k] = v
		}
		var single genResponse
		if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", one, &single); code != 200 || len(single.Images) != 1 {
			t.Fatalf("the single request at strength %g: %d", strength, code)
		}
		want, _ := decodeImage(t, single.Images[0])
		got, _ := decodeImage(t, resp.Images[1+i])
		if !bytes.Equal(got.Pix, want.Pix) {
			t.Errorf("cell %d (variation strength %g) differs from the single request's image", i+1, strength)
		}
	}
}

// TestXYZPlotInterruptKeepsCells: /interrupt while the third of four cells is being made answers
// with the two cells finished, each `easel generate`'s image of its seed, and the partial grid
// (its list naming those two), with the interruption in info.
func TestXYZPlotInterruptKeepsCells(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	var url string
	watch := &pipelinetest.Watch{BeforeStep: func(n int) {
		if n == 5 { // 2 steps a cell, no CFG: the third cell's first step
			if r, err := http.Post(url+"/sdapi/v1/interrupt", "application/json", strings.NewReader("{}")); err == nil {
				r.Body.Close()
			}
		}
	}}
	ts := watchedServer(t, watch)
	url = ts.URL
	var resp genResponse
	code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"easel_alpha": true,
		"prompt": "a paper crane", "width": 64, "height": 64, "steps": 2, "seed": 5, "cfg_scale": 1,
		"script_name": "x/y/z plot", "script_args": xyzArgs(1, "1-4", 0, "", 0, "", true)}, &resp)
	if code != 200 || len(resp.Images) != 3 {
		t.Fatalf("%d with %d images; want 200 with the partial grid and the 2 finished cells", code, len(resp.Images))
	}
	if n := watch.Prefills(); n != 1 {
		t.Errorf("%d prefills; want 1", n)
	}
	_, data := decodeImage(t, resp.Images[0])
	m, err := imagefile.Read(bytes.NewReader(data), "grid")
	if err != nil || m.Settings == nil || m.Settings.Grid == nil || len(m.Settings.Grid.Cells) != 4 ||
		m.Settings.Grid.Cells[0] == "" || m.Settings.Grid.Cells[1] == "" || m.Settings.Grid.Cells[2] != "" || m.Settings.Grid.Cells[3] != "" {
		t.Fatalf("the partial grid: %+v (%v)", m, err)
	}
	for i := range 2 {
		got, _ := decodeImage(t, resp.Images[1+i])
		if !bytes.Equal(got.Pix, cliImage(t, "a paper crane", uint64(i+1), 2)) {
			t.Errorf("finished cell %d differs from easel generate's", i+1)
		}
	}
	info := resp.info(t)
	if ws := fmt.Sprint(info["warnings"]); !strings.Contains(ws, "interrupted: 2 of 4 cells were made") {
		t.Errorf("warnings %v; want the interruption", ws)
	}
}

// TestXYZPlotPromptSRPrefills: a Prompt S/R axis of three values changes the prompt, so the grid
// runs three jobs and prefills three times; a Seed axis against it shares each prompt's prefill.
func TestXYZPlotPromptSRPrefills(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	watch := &pipelinetest.Watch{}
	ts := watchedServer(t, watch)
	var resp genResponse
	code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"easel_alpha": true,
		"prompt": "a red apple", "width": 64, "height": 64, "steps": 2, "seed": 5, "cfg_scale": 1,
		"script_name": "x/y/z plot", "script_args": xyzArgs(7, "red, green, blue", 1, "1,2", 0, "", true)}, &resp)
	if code != 200 || len(resp.Images) != 7 {
		t.Fatalf("%d with %d images; want 200 with the grid and 6 cells", code, len(resp.Images))
	}
	if n := watch.Prefills(); n != 3 {
		t.Errorf("%d prefills for three prompts; want 3", n)
	}
	if n := len(ts.Queue.Jobs()); n != 3 {
		t.Errorf("%d queued jobs; want 3 (one per prompt)", n)
	}
	got, _ := decodeImage(t, resp.Images[1+5]) // blue, seed 2: X fastest
	if !bytes.Equal(got.Pix, cliImage(t, "a blue apple", 2, 2)) {
		t.Error("the cell (blue, seed 2) differs from easel generate's")
	}
}

// TestXYZPlotImg2imgCellsAreSingleRuns: an img2img Denoising axis runs over one prefill, each
// cell the image the single img2img request with that denoising_strength makes.
func TestXYZPlotImg2imgCellsAreSingleRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	watch := &pipelinetest.Watch{}
	ts := watchedServer(t, watch)
	init := pngBase64(t, testPicture(64, 64))
	body := func() map[string]any {
		return map[string]any{"prompt": "a red apple", "init_images": []string{init}, "steps": 3, "seed": 3, "cfg_scale": 1}
	}
	grid := body()
	grid["script_name"], grid["script_args"] = "x/y/z plot", xyzArgs(22, "0.5,0.8", 0, "", 0, "", true)
	var resp genResponse
	if code := call(t, "POST", ts.URL+"/sdapi/v1/img2img", grid, &resp); code != 200 || len(resp.Images) != 3 {
		t.Fatalf("%d with %d images; want 200 with the grid and 2 cells", code, len(resp.Images))
	}
	if n := watch.Prefills(); n != 1 {
		t.Errorf("%d prefills; want 1", n)
	}
	for i, strength := range []float64{0.5, 0.8} {
		one := body()
		one["denoising_strength"] = strength
		var single genResponse
		if code := call(t, "POST", ts.URL+"/sdapi/v1/img2img", one, &single); code != 200 || len(single.Images) != 1 {
			t.Fatalf("the single img2img at %g: %d", strength, code)
		}
		want, _ := decodeImage(t, single.Images[0])
		got, _ := decodeImage(t, resp.Images[1+i])
		if !bytes.Equal(got.Pix, want.Pix) {
			t.Errorf("cell %d (denoising %g) differs from the single img2img's image", i+1, strength)
		}
	}
}

// TestXYZPlotSkipSaysWhatWasMade: /skip during a grid's third cell ends that cell's job (the
// cells sharing its prefill); the answer keeps the two finished cells and says what was made.
func TestXYZPlotSkipSaysWhatWasMade(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	var url string
	watch := &pipelinetest.Watch{BeforeStep: func(n int) {
		if n == 5 { // 2 steps a cell, no CFG: the third cell's first step
			if r, err := http.Post(url+"/sdapi/v1/skip", "application/json", strings.NewReader("{}")); err == nil {
				r.Body.Close()
			}
		}
	}}
	ts := watchedServer(t, watch)
	url = ts.URL
	var resp genResponse
	code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{
		"prompt": "a paper crane", "width": 64, "height": 64, "steps": 2, "seed": 5, "cfg_scale": 1,
		"script_name": "x/y/z plot", "script_args": xyzArgs(1, "1-4", 0, "", 0, "", true)}, &resp)
	if code != 200 || len(resp.Images) != 3 {
		t.Fatalf("%d with %d images; want 200 with the partial grid and the 2 finished cells", code, len(resp.Images))
	}
	if ws := fmt.Sprint(resp.info(t)["warnings"]); !strings.Contains(ws, "skipped: 2 of 4 cells were made") {
		t.Errorf("warnings %v; want what the skip left", ws)
	}
}
