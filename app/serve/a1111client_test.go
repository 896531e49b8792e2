package serve_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"easel/app/serve"
)

// TestPublishedA1111Client runs a client written by others — stable-diffusion-api from npm,
// installed by tools/deps.sh test into testdata/a1111client — against the server with
// credentials: options (get and set the model), samplers, sd-models, txt2img of two images while
// it polls progress, img2img from its result, png-info. Without node or the installed package the
// test is skipped on a developer's machine and fails in CI (CI=true).
func TestPublishedA1111Client(t *testing.T) {
	dir, _ := filepath.Abs(filepath.Join("testdata", "a1111client"))
	node, err := exec.LookPath("node")
	if _, statErr := os.Stat(filepath.Join(dir, "node_modules", "stable-diffusion-api")); err != nil || statErr != nil {
		msg := "node or the npm package stable-diffusion-api is missing: run `bash tools/deps.sh test`"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	url, _, _ := listening(t, &fakeGen{pause: 5 * time.Millisecond}, serve.Config{Auth: serve.Auth{User: "artist", Pass: "s3cret"}})
	cmd := exec.Command(node, "check.js", url, "artist", "s3cret")
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the client failed: %v\n%s", err, stderr.String())
	}
	var got struct {
		Model    string
		Samplers []string
		Models   []string
		Progress []struct {
			Progress float64
			Step     int
			Image    bool
		}
		Txt2img, Img2img struct {
			Count int
			Info  map[string]any
			Size  []int
		}
		PngInfo string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the client's summary %q: %v", out, err)
	}
	if got.Model == "" || len(got.Samplers) != 1 || got.Samplers[0] != "Euler" || len(got.Models) == 0 {
		t.Errorf("options/samplers/models: %+v", got)
	}
	if got.Txt2img.Count != 2 || len(got.Txt2img.Size) != 2 || got.Txt2img.Size[0] != 64 || got.Txt2img.Info["seed"] != 42.0 {
		t.Errorf("txt2img through the client: %+v", got.Txt2img)
	}
	if seeds, _ := got.Txt2img.Info["all_seeds"].([]any); len(seeds) != 2 || seeds[1] != 43.0 {
		t.Errorf("all_seeds %v", got.Txt2img.Info["all_seeds"])
	}
	if w := got.Txt2img.Info["warnings"]; !strings.Contains(strings.ToLower(jsonText(w)), "euler a") {
		t.Errorf("the client's default sampler (Euler a) was not reported: %v", w)
	}
	// The client sends A1111's 512×512 with img2img: the init image is fitted to it, as A1111
	// resizes it.
	if got.Img2img.Count != 1 || got.Img2img.Info["denoising_strength"] != 0.75 || got.Img2img.Size[0] != 512 || got.Img2img.Size[1] != 512 {
		t.Errorf("img2img through the client: %+v", got.Img2img)
	}
	rising, previews := 0, 0
	for i, p := range got.Progress {
		if i > 0 && p.Progress > got.Progress[i-1].Progress {
			rising++
		}
		if p.Image {
			previews++
		}
	}
	if rising == 0 || previews == 0 {
		t.Errorf("progress as the client saw it never rose with a preview: %+v", got.Progress)
	}
	if got.PngInfo != "string" {
		t.Errorf("png-info's info is %s", got.PngInfo)
	}
}

func jsonText(v any) string { b, _ := json.Marshal(v); return string(b) }
