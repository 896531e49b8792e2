package serve_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"easel/app/cli"
	"easel/app/jobs"
	"easel/app/serve"
	"easel/engine/imageio"
)

// openAIClient runs testdata/openaiclient/check.js (the official openai npm package, installed by
// tools/deps.sh test) in mode against url with token; it returns the client's JSON summary.
// Without node or the package the test is skipped on a developer's machine and fails in CI.
func openAIClient(t *testing.T, mode, url, token, dir string, out any) {
	t.Helper()
	pkg, _ := filepath.Abs(filepath.Join("testdata", "openaiclient"))
	node, err := exec.LookPath("node")
	if _, statErr := os.Stat(filepath.Join(pkg, "node_modules", "openai")); err != nil || statErr != nil {
		msg := "node or the npm package openai is missing: run `bash tools/deps.sh test`"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cmd := exec.Command(node, "check.js", mode, url, token, dir)
	cmd.Dir = pkg
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("the openai client (%s) failed: %v\n%s", mode, err, stderr.String())
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		t.Fatalf("the client's summary %q: %v", stdout, err)
	}
}

// writePNG writes img to path.
func writePNG(t *testing.T, path string, img image.Image) {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// easelGenerate runs `easel generate` with args and the model, and loads its picture.
func easelGenerate(t *testing.T, model string, args ...string) *image.NRGBA {
	t.Helper()
	out := filepath.Join(t.TempDir(), "cli.png")
	var stdout, stderr bytes.Buffer
	if c := cli.Run(append([]string{"generate", "--model", model, "--out", out}, args...), &stdout, &stderr); c != 0 {
		t.Fatalf("easel generate %v: exit %d: %s", args, c, stderr.String())
	}
	img, err := imageio.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// loadAnswer reads a picture the client wrote, with its PNG colour type (2 RGB, 6 RGBA).
func loadAnswer(t *testing.T, path string) (*image.NRGBA, byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return toNRGBA(img), data[25] // IHDR: signature 8, length 4, type 4, width 4, height 4, depth 1
}

// sameRGB reports whether two pictures have the same size and colour channels.
func sameRGB(a, b *image.NRGBA) bool {
	if a.Rect.Size() != b.Rect.Size() {
		return false
	}
	for i := 0; i < len(a.Pix); i += 4 {
		if a.Pix[i] != b.Pix[i] || a.Pix[i+1] != b.Pix[i+1] || a.Pix[i+2] != b.Pix[i+2] {
			return false
		}
	}
	return true
}

// TestOpenAIClientEqualsGenerate: the official openai package, pointed at easel serve with the
// token as its API key, gets from images.generate (seed, steps, background "transparent") the
// picture `easel generate` makes, alpha included; from images.edit with two images the colour
// channels of `easel generate --image A --image B`, as an RGB PNG; from images.edit with an
// OpenAI mask (transparent = change) those of `easel generate --init A --mask M --strength 1`
// (M white where the mask is transparent); a bad size and a missing prompt get OpenAI's error
// shape and a 400, and the server goes on serving.
func TestOpenAIClientEqualsGenerate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	model := tinyModel(t)
	dir := t.TempDir()
	a, b := testPicture(64, 64), image.NewNRGBA(image.Rect(0, 0, 64, 64))
	openaiMask, cliMask := image.NewNRGBA(image.Rect(0, 0, 64, 64)), image.NewNRGBA(image.Rect(0, 0, 64, 64))
	for y := range 64 {
		for x := range 64 {
			b.SetNRGBA(x, y, color.NRGBA{uint8(255 - 4*y), 200, uint8(4 * x), 255})
			if y >= 32 { // the lower half changes: transparent in OpenAI's mask, white in Easel's
				openaiMask.SetNRGBA(x, y, color.NRGBA{0, 0, 0, 0})
				cliMask.SetNRGBA(x, y, color.NRGBA{255, 255, 255, 255})
			} else {
				openaiMask.SetNRGBA(x, y, color.NRGBA{0, 0, 0, 255})
				cliMask.SetNRGBA(x, y, color.NRGBA{0, 0, 0, 255})
			}
		}
	}
	for name, img := range map[string]image.Image{"a.png": a, "b.png": b, "mask.png": openaiMask, "cli-mask.png": cliMask} {
		writePNG(t, filepath.Join(dir, name), img)
	}
	url, _, _ := listening(t, &jobs.ModelGenerator{Path: model}, serve.Config{Auth: serve.Auth{Token: "tok-123"}})
	var got struct {
		Generate, Edit, Masked struct {
			Count                          int
			Size, Background, OutputFormat string
		}
		BadSize, NoPrompt struct {
			Status                     int
			Type, Param, Code, Message string
		}
	}
	openAIClient(t, "pictures", url, "tok-123", dir, &got)

	gen, ctype := loadAnswer(t, filepath.Join(dir, "generate.png"))
	want := easelGenerate(t, model, "--prompt", "a lighthouse at dusk", "--size", "64x64", "--seed", "7", "--steps", "2")
	if gen.Rect != want.Rect || !bytes.Equal(gen.Pix, want.Pix) || ctype != 6 {
		t.Errorf("images.generate (transparent): %v colour type %d differs from easel generate's %v (RGBA, type 6)", gen.Rect, ctype, want.Rect)
	}
	if got.Generate.Count != 1 || got.Generate.Size != "64x64" || got.Generate.Background != "transparent" {
		t.Errorf("images.generate's answer: %+v", got.Generate)
	}
	edit, ctype := loadAnswer(t, filepath.Join(dir, "edit.png"))
	want = easelGenerate(t, model, "--prompt", "the two side by side", "--image", filepath.Join(dir, "a.png"), "--image", filepath.Join(dir, "b.png"),
		"--size", "64x64", "--seed", "9", "--steps", "2")
	if !sameRGB(edit, want) || ctype != 2 {
		t.Errorf("images.edit with two images: %v colour type %d; want easel generate --image A --image B's colours %v as RGB (type 2)", edit.Rect, ctype, want.Rect)
	}
	if got.Edit.Background != "opaque" {
		t.Errorf("images.edit's answer: %+v", got.Edit)
	}
	masked, _ := loadAnswer(t, filepath.Join(dir, "masked.png"))
	want = easelGenerate(t, model, "--prompt", "a red door", "--init", filepath.Join(dir, "a.png"), "--mask", filepath.Join(dir, "cli-mask.png"),
		"--strength", "1", "--seed", "11", "--steps", "2")
	if !sameRGB(masked, want) {
		t.Errorf("images.edit with a mask differs from easel generate --init A --mask M --strength 1 (%v, %v)", masked.Rect, want.Rect)
	}
	if bs := got.BadSize; bs.Status != 400 || bs.Type != "invalid_request_error" || bs.Param != "size" || bs.Code != "invalid_value" || !strings.Contains(bs.Message, "WIDTHxHEIGHT") {
		t.Errorf("a bad size: %+v", bs)
	}
	if np := got.NoPrompt; np.Status != 400 || np.Param != "prompt" || np.Code != "missing_required_parameter" {
		t.Errorf("a missing prompt: %+v", np)
	}
}

// TestOpenAIClientStreamsPreviews: with stream and partial_images 2, the official client reads
// two image_generation.partial_image events (indexes 0 and 1, the live previews) and one
// image_generation.completed.
func TestOpenAIClientStreamsPreviews(t *testing.T) {
	url, _, _ := listening(t, &fakeGen{pause: time.Millisecond}, serve.Config{Auth: serve.Auth{Token: "tok-123"}})
	var got struct {
		Events []struct {
			Type  string
			Index *int
			Size  string
			B64   bool
		}
	}
	openAIClient(t, "stream", url, "tok-123", t.TempDir(), &got)
	var types []string
	for _, e := range got.Events {
		types = append(types, e.Type)
		if !e.B64 {
			t.Errorf("event %s carries no image", e.Type)
		}
	}
	if strings.Join(types, " ") != "image_generation.partial_image image_generation.partial_image image_generation.completed" {
		t.Fatalf("events %v", types)
	}
	if *got.Events[0].Index != 0 || *got.Events[1].Index != 1 || got.Events[2].Size != "64x64" {
		t.Errorf("events %+v", got.Events)
	}
}
