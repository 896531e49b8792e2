package serve_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/cli"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/serve"
	"easel/engine/cmf"
	"easel/engine/imageio"
	"easel/engine/latents"
	"easel/engine/pipeline"
	"easel/engine/seed"
)

// TestTxt2imgEqualsGenerate: on the tiny model, a txt2img request of two images (batch_size 2)
// returns the images `easel generate` makes with the same settings and seeds 11 and 12, bit for
// bit, with info (a JSON string) giving those seeds, and each PNG carrying the app's metadata.
func TestTxt2imgEqualsGenerate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	model := tinyModel(t)
	ts := newTestServer(t, &jobs.ModelGenerator{Path: model}, serve.Config{Model: model})
	var resp genResponse
	code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"easel_alpha": true,
		"prompt": "a red apple", "negative_prompt": "blurry", "cfg_scale": 3, "width": 64, "height": 96,
		"steps": 3, "seed": 11, "batch_size": 2, "sampler_name": "Euler", "some_unknown_key": true}, &resp)
	if code != 200 {
		t.Fatalf("txt2img: %d %+v", code, resp)
	}
	info := resp.info(t)
	if fmt.Sprint(info["all_seeds"]) != "[11 12]" || fmt.Sprint(info["seed"]) != "11" || fmt.Sprint(info["steps"]) != "3" {
		t.Errorf("info seeds %v / %v, steps %v; want [11 12], 11, 3", info["all_seeds"], info["seed"], info["steps"])
	}
	if len(resp.Images) != 2 {
		t.Fatalf("%d images, want 2", len(resp.Images))
	}
	for i, sd := range []int{11, 12} {
		out := filepath.Join(t.TempDir(), "cli.png")
		var stdout, stderr bytes.Buffer
		if c := cli.Run([]string{"generate", "--model", model, "--prompt", "a red apple", "--negative", "blurry", "--cfg", "3",
			"--size", "64x96", "--steps", "3", "--seed", fmt.Sprint(sd), "--out", out}, &stdout, &stderr); c != 0 {
			t.Fatalf("easel generate: exit %d: %s", c, stderr.String())
		}
		want, err := imageio.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		got, data := decodeImage(t, resp.Images[i])
		if !bytes.Equal(got.Pix, want.Pix) || got.Rect != want.Rect {
			t.Errorf("image %d (seed %d) differs from easel generate's", i, sd)
		}
		m, err := imagefile.Read(bytes.NewReader(data), "answer")
		if err != nil || m.Settings == nil {
			t.Fatalf("image %d carries no Easel settings: %v", i, err)
		}
		if s := m.Settings; s.Seed != uint64(sd) || s.Prompt != "a red apple" || s.NegativePrompt != "blurry" || s.Steps != 3 || s.CFG != 3 || s.Width != 64 || s.Height != 96 {
			t.Errorf("image %d settings %+v", i, s)
		}
		if !strings.Contains(m.Parameters, "Seed: "+fmt.Sprint(sd)) {
			t.Errorf("image %d parameters %q", i, m.Parameters)
		}
	}
	texts, _ := info["infotexts"].([]any)
	if len(texts) != 2 || !strings.Contains(fmt.Sprint(texts[1]), "Seed: 12") {
		t.Errorf("infotexts %v", texts)
	}
}

// TestAbsentFieldsTakeTheModelsDefaults: an empty request makes one image at A1111's 512×512
// (whatever the model's own size) with the model's steps (left to the pipeline) and CFG 1; a
// random seed (−1) is reported in info.
func TestAbsentFieldsTakeTheModelsDefaults(t *testing.T) {
	gen := &fakeGen{}
	ts := newTestServer(t, gen, serve.Config{})
	var resp genResponse
	if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{}, &resp); code != 200 {
		t.Fatalf("txt2img {}: %d", code)
	}
	f, err := cmf.Open(tinyModel(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := pipeline.ReadDefaults(f)
	if err != nil {
		t.Fatal(err)
	}
	reqs := gen.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d jobs ran, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Width != 512 || r.Height != 512 || r.Steps != 0 || (r.CFG != 0 && r.CFG != 1) || r.NegativePrompt != "" {
		t.Errorf("request %dx%d, %d steps, CFG %g; want A1111's 512x512 (not the model's %dx%d), the model's steps and CFG (0 = the pipeline's default, 1 for this model)", r.Width, r.Height, r.Steps, r.CFG, d.Width, d.Height)
	}
	info := resp.info(t)
	if uint64(info["seed"].(float64)) != r.Seed || fmt.Sprint(info["cfg_scale"]) != "1" {
		t.Errorf("info seed %v cfg %v; the job ran with seed %d", info["seed"], info["cfg_scale"], r.Seed)
	}
	if len(resp.Images) != 1 {
		t.Errorf("%d images", len(resp.Images))
	}
}

// TestBatchSeedsAndVariation: batch_size 2 × n_iter 2 is four jobs with seeds seed+i, each the
// same request a single run with that seed makes; with subseed_strength the seed stays and the
// subseeds count up, and each job's noise is the variation noise (strength 0 leaves the noise to
// the seed, bit for bit the plain run).
func TestBatchSeedsAndVariation(t *testing.T) {
	gen := &fakeGen{}
	ts := newTestServer(t, gen, serve.Config{})
	var resp genResponse
	if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"prompt": "x", "width": 64, "height": 64, "steps": 2,
		"seed": 100, "subseed": 7, "batch_size": 2, "n_iter": 2}, &resp); code != 200 {
		t.Fatalf("%d", code)
	}
	info := resp.info(t)
	if fmt.Sprint(info["all_seeds"]) != "[100 101 102 103]" || fmt.Sprint(info["all_subseeds"]) != "[7 8 9 10]" {
		t.Errorf("all_seeds %v all_subseeds %v", info["all_seeds"], info["all_subseeds"])
	}
	for i, r := range gen.requests() {
		if r.Seed != uint64(100+i) || r.Noise != nil {
			t.Errorf("job %d: seed %d, noise given %v", i, r.Seed, r.Noise != nil)
		}
	}
	gen2 := &fakeGen{}
	ts2 := newTestServer(t, gen2, serve.Config{})
	if code := call(t, "POST", ts2.URL+"/sdapi/v1/txt2img", map[string]any{"prompt": "x", "width": 64, "height": 32, "steps": 2,
		"seed": 100, "subseed": 7, "subseed_strength": 0.25, "batch_size": 2}, &resp); code != 200 {
		t.Fatalf("%d", code)
	}
	info = resp.info(t)
	if fmt.Sprint(info["all_seeds"]) != "[100 100]" || fmt.Sprint(info["all_subseeds"]) != "[7 8]" {
		t.Errorf("with a variation: all_seeds %v all_subseeds %v", info["all_seeds"], info["all_subseeds"])
	}
	for i, r := range gen2.requests() {
		want, err := seed.VariationNoise(100, seed.Variation{Seed: uint64(7 + i), Strength: 0.25}, 64, 2, 4)
		if err != nil {
			t.Fatal(err)
		}
		want, _ = latents.Pack(want, 64, 2, 4)
		if len(r.Noise) != len(want) {
			t.Fatalf("job %d: %d noise values, want %d", i, len(r.Noise), len(want))
		}
		for k := range want {
			if r.Noise[k] != want[k] {
				t.Fatalf("job %d: noise differs at %d", i, k)
			}
		}
	}
}

// TestUnknownSamplerIsSaid: a sampler or scheduler Easel lacks is reported in info's warnings,
// the image made with Euler.
func TestUnknownSamplerIsSaid(t *testing.T) {
	ts := newTestServer(t, &fakeGen{}, serve.Config{})
	var resp genResponse
	if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"width": 32, "height": 32, "sampler_name": "DPM++ 2M Karras", "scheduler": "karras"}, &resp); code != 200 {
		t.Fatalf("%d", code)
	}
	info := resp.info(t)
	w := fmt.Sprint(info["warnings"])
	if !strings.Contains(w, "DPM++ 2M Karras") || !strings.Contains(w, "karras") || info["sampler_name"] != "Euler" {
		t.Errorf("warnings %s, sampler %v", w, info["sampler_name"])
	}
}

var _ = io.EOF

// recoveringGen is fakeGen whose runs recovered from a GPU watchdog stop (pipeline.Result.Recoveries,
// as the Metal placement reports one).
type recoveringGen struct{ fakeGen }

const watchdogNotice = "Step 1 of 4 on Metal: the GPU's watchdog stopped a long command buffer; Easel ran the step again with one transformer block per command buffer, and keeps doing so on this Mac; the image is unaffected."

func (g *recoveringGen) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	res, err := g.fakeGen.Run(ctx, req, events)
	if res != nil {
		res.Recoveries = []pipeline.Recovery{{Kind: pipeline.RecoveryTimeout, Device: "Metal", Network: "the denoiser", Call: "a step", Step: 1, Steps: 4, Count: 2, Notice: watchdogNotice}}
	}
	return res, err
}

// decliningGen is a generator whose device declines the denoiser at each run's start: the
// pipeline says so in a notice event and goes on on the CPU.
type decliningGen struct{ fakeGen }

const declineNotice = "Metal declined the denoiser (the GPU self-test failed for ops_linear): it runs on the CPU, slower."

func (g *decliningGen) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	events <- pipeline.Event{Stage: pipeline.StageEncodingPrompt, Notice: declineNotice}
	return g.fakeGen.Run(ctx, req, events)
}

// TestDeclinesAreSaidInInfo: a notice a run sent on its way (a stage a device declined) is in
// info's warnings, once however many images said it.
func TestDeclinesAreSaidInInfo(t *testing.T) {
	checkSaidOnceInWarnings(t, &decliningGen{}, declineNotice)
}

// TestRecoveriesAreSaidInInfo: what a device recovered from during the request's runs is in
// info's warnings, once however many images recovered the same way.
func TestRecoveriesAreSaidInInfo(t *testing.T) {
	checkSaidOnceInWarnings(t, &recoveringGen{}, watchdogNotice)
}

// checkSaidOnceInWarnings makes a batch of two images on gen and checks that info's warnings
// hold notice exactly once.
func checkSaidOnceInWarnings(t *testing.T, gen jobs.Generator, notice string) {
	t.Helper()
	ts := newTestServer(t, gen, serve.Config{})
	var resp genResponse
	if code := call(t, "POST", ts.URL+"/sdapi/v1/txt2img", map[string]any{"width": 32, "height": 32, "batch_size": 2}, &resp); code != 200 {
		t.Fatalf("%d", code)
	}
	w, _ := resp.info(t)["warnings"].([]any)
	n := 0
	for _, s := range w {
		if s == notice {
			n++
		}
	}
	if n != 1 {
		t.Errorf("warnings %q: want %q once", w, notice)
	}
}
