package cli

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"easel/app/imagefile"
	"easel/engine/convert"
	"easel/engine/vae"
	"easel/internal/golden"
)

// tinyCMF converts the tiny reference snapshot once with the f16 profile (the snapshot's own
// precision) into a folder that lives as long as the test binary's first user test.
var (
	tinyOnce sync.Once
	tinyFile string
	tinyErr  error
)

func tinyCMF(t testing.TB) string {
	t.Helper()
	tinyOnce.Do(func() {
		snap, err := golden.ModelSnapshot()
		if err != nil {
			tinyErr = err
			return
		}
		dir, err := os.MkdirTemp("", "easel-generate-test-")
		if err != nil {
			tinyErr = err
			return
		}
		tinyFile = filepath.Join(dir, "tiny-qwen-image-2.1.cmf")
		_, tinyErr = convert.Convert(context.Background(), snap, tinyFile, convert.Options{Profile: convert.ProfileF16})
	})
	if tinyErr != nil {
		t.Fatalf("converting the tiny reference snapshot: %v", tinyErr)
	}
	return tinyFile
}

// nrgbaBytes is a decoded PNG's pixels as non-premultiplied RGBA bytes.
func nrgbaBytes(img image.Image) []uint8 {
	b := img.Bounds()
	out := make([]uint8, 0, 4*b.Dx()*b.Dy())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			out = append(out, c.R, c.G, c.B, c.A)
		}
	}
	return out
}

// TestGenerateReproducesReference runs `easel generate` for every pipeline case with the case's
// prompt, negative prompt, CFG, steps, size (or resolution and condition PNGs) and seed, all read
// from the case's metadata, on the tiny model converted from the reference snapshot (the model
// file carries the snapshot's image-processor settings, so the command line alone reproduces the
// reference): the saved PNG's pixels are the reference image_np at 8 bits (numpy's rounding; one
// code off only within 1e-3 of a tie), and the PNG carries the prompt and the settings.
func TestGenerateReproducesReference(t *testing.T) {
	model := tinyCMF(t)
	paths, err := golden.Cases("pipeline")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no pipeline_* reference cases in the golden directory")
	}
	dir, err := golden.Dir()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		c, err := golden.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		t.Run(c.Name, func(t *testing.T) {
			spec, err := c.Pipeline()
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), c.Name+".png")
			args := []string{"generate", "--model", model, "--prompt", spec.Prompt, "--cfg", fmt.Sprint(spec.CFG),
				"--steps", fmt.Sprint(spec.Steps), "--resolution", fmt.Sprint(spec.Resolution), "--seed", fmt.Sprint(spec.Seed), "--out", out}
			if spec.HasNegative {
				args = append(args, "--negative", spec.Negative)
			}
			if spec.Width != 0 {
				args = append(args, "--size", fmt.Sprintf("%dx%d", spec.Width, spec.Height))
			}
			for _, f := range spec.CondImages {
				args = append(args, "--image", filepath.Join(dir, f))
			}
			code, stdout, stderr := run(args...)
			if code != ExitOK {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
			}
			if !strings.Contains(stdout, out) {
				t.Errorf("stdout %q does not name the saved file", stdout)
			}
			assertReferencePixels(t, out, c)
			m, err := imagefile.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			h, w := spec.Target()
			s := m.Settings
			if s == nil || s.Prompt != spec.Prompt || s.NegativePrompt != negativeUsed(spec.Negative, spec.CFG) || s.Seed != spec.Seed ||
				s.Steps != spec.Steps || s.CFG != spec.CFG || s.Width != 16*w || s.Height != 16*h || len(s.Images) != len(spec.CondImages) ||
				s.Model != filepath.Base(model) || len(s.ModelHash) != 64 {
				t.Errorf("embedded settings %+v, want those of the case %+v", s, spec)
			}
			p := imagefile.ParseParameters(m.Parameters)
			if !strings.HasPrefix(m.Parameters, spec.Prompt+"\n") || p.Steps != spec.Steps || p.CFG != spec.CFG || !p.HasSeed ||
				p.Seed != spec.Seed || p.Width != 16*w || p.Height != 16*h || p.Sampler != "Euler" {
				t.Errorf("parameters chunk %q reads as %+v", m.Parameters, p)
			}
		})
	}
}

// assertReferencePixels checks that the PNG at path holds the case's image_np at 8 bits (numpy's
// rounding; one code off only within 1e-3 of a tie).
func assertReferencePixels(t *testing.T, path string, c *golden.Case) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("image/png cannot decode the output: %v", err)
	}
	want, shape, err := c.Float32s("image_np")
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != shape[1] || b.Dy() != shape[0] {
		t.Fatalf("saved %v, the reference is %d×%d", b, shape[1], shape[0])
	}
	got := nrgbaBytes(img)
	exact := 0
	for i, x := range want {
		exp := vae.To8Bit(x)
		if got[i] == exp {
			exact++
			continue
		}
		frac := float64(x*255) - math.Floor(float64(x*255))
		if math.Abs(float64(got[i])-float64(exp)) > 1 || math.Abs(frac-0.5) > 1e-3 {
			t.Fatalf("byte %d (pixel %d, channel %d): saved %d, the reference %.6f gives %d", i, i/4, i%4, got[i], x, exp)
		}
	}
	t.Logf("%d of %d bytes equal the reference's 8-bit rounding", exact, len(want))
}

// TestGenerateJSON: --json prints one JSON object per line: every stage, every step with its
// timings and memory ledger, and the saved file last.
func TestGenerateJSON(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no app settings: the auto backend
	model := tinyCMF(t)
	out := filepath.Join(t.TempDir(), "cfg.png")
	code, stdout, stderr := run("generate", "--model", model, "--prompt", "一只戴着巫师帽的水豚", "--negative", "blurry",
		"--cfg", "3", "--size", "64x96", "--steps", "3", "--seed", "11", "--out", out, "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var stages []string
	steps := 0
	var last map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %q is not JSON: %v", line, err)
		}
		if s := ev["stage"].(string); len(stages) == 0 || stages[len(stages)-1] != s {
			stages = append(stages, s)
		}
		if ev["step"] != nil {
			steps++
			mem := ev["memory"].(map[string]any)
			if len(mem["prefix_kv_bytes"].([]any)) != 2 || ev["timings"].(map[string]any)["gemm"] == nil {
				t.Errorf("step event without two programs' K/V or GEMM timings: %s", line)
			}
		}
		last = ev
	}
	want := []string{"backend", "encoding prompt", "prefill", "denoising", "decoding", "done", "saved"}
	if strings.Join(stages, "|") != strings.Join(want, "|") || steps != 3 {
		t.Errorf("stages %v with %d step events; want %v and 3", stages, steps, want)
	}
	if last["path"] != out {
		t.Errorf("last event %v does not name %s", last, out)
	}
	m, err := imagefile.ReadFile(out)
	if err != nil || m.Settings.NegativePrompt != "blurry" || m.Settings.CFG != 3 || !strings.HasPrefix(m.Parameters, "一只戴着巫师帽的水豚\nNegative prompt: blurry\n") {
		t.Errorf("embedded: %+v, %q, %v", m.Settings, m.Parameters, err)
	}
}

// hugePNG is a valid PNG header announcing a 20000×20000 image (the pixel data is not there).
func hugePNG(t *testing.T) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewNRGBA(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	binary.BigEndian.PutUint32(data[16:], 20000)
	binary.BigEndian.PutUint32(data[20:], 20000)
	binary.BigEndian.PutUint32(data[29:], crc32.ChecksumIEEE(data[12:29]))
	return data
}

// TestGenerateBadInputs: every bad input gets its own exit code and a message that names the
// problem, and no image file appears.
func TestGenerateBadInputs(t *testing.T) {
	model := tinyCMF(t)
	snap, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notCMF := write("notes.cmf", []byte("these are not weights"))
	huge := write("huge.png", hugePNG(t))
	text := write("picture.png", []byte("not a picture"))
	out := filepath.Join(dir, "out.png")
	base := []string{"--model", model, "--prompt", "a cat", "--steps", "2", "--size", "32x32", "--out", out}
	with := func(extra ...string) []string { return append(append([]string{}, base...), extra...) }
	var eleven []string
	for range 11 {
		eleven = append(eleven, "--image", huge)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"no model flag", []string{"--prompt", "x"}, ExitUsage, "--model is required"},
		{"unknown flag", with("--colour", "red"), ExitUsage, "colour"},
		{"stray argument", with("cat"), ExitUsage, "unexpected argument"},
		{"missing model", []string{"--model", filepath.Join(dir, "nope.cmf"), "--out", out}, ExitModelMissing, "does not exist"},
		{"not a cmf", []string{"--model", notCMF, "--out", out}, ExitModelInvalid, "CMF magic"},
		{"snapshot folder", []string{"--model", snap, "--out", out}, ExitModelInvalid, "easel convert"},
		{"missing image", with("--image", filepath.Join(dir, "gone.png")), ExitImage, "gone.png"},
		{"not an image", with("--image", text), ExitImage, "picture.png"},
		{"oversized image", with("--image", huge), ExitImage, "huge.png"},
		{"eleven images", with(eleven...), ExitImage, "at most 10"},
		{"tiny size", with("--size", "16x16"), ExitSize, "smaller than 32"},
		{"size and aspect", with("--aspect", "16:9"), ExitSize, "choose one"},
		{"bad size", with("--size", "large"), ExitSize, "WIDTHxHEIGHT"},
		{"bad aspect", []string{"--model", model, "--aspect", "0:1", "--out", out}, ExitSize, "aspect ratio"},
		{"negative steps", with("--steps", "-1"), ExitSettings, "choose at least 1"},
		{"negative cfg", with("--cfg", "-2"), ExitSettings, "--cfg"},
		{"bad seed", with("--seed", "lucky"), ExitSettings, "--seed"},
		{"missing folder", with("--out", filepath.Join(dir, "no", "out.png")), ExitWrite, "does not exist"},
		{"not png", with("--out", filepath.Join(dir, "out.jpg")), ExitUsage, ".png"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(append([]string{"generate"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.says) {
				t.Errorf("exit %d, stderr %q; want exit %d and a message with %q", code, stderr, tc.code, tc.says)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
				os.Remove(out)
			}
		})
	}
}

// TestGenerateEmptyPromptAndCancel: an empty prompt is a valid request; an interrupted run exits
// 130, says the file was not written, and leaves nothing in the folder.
func TestGenerateEmptyPromptAndCancel(t *testing.T) {
	model := tinyCMF(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "empty.png")
	if code, _, stderr := run("generate", "--model", model, "--prompt", "", "--size", "32x32", "--steps", "2", "--out", out); code != ExitOK {
		t.Fatalf("empty prompt: exit %d: %s", code, stderr)
	}
	os.Remove(out)
	interruptContext = func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // Ctrl-C already pressed
		return ctx, cancel
	}
	defer func() {
		interruptContext = func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }
	}()
	code, _, stderr := run("generate", "--model", model, "--prompt", "a cat", "--size", "32x32", "--steps", "2", "--out", out)
	if code != ExitCancelled || !strings.Contains(stderr, "was not written") {
		t.Errorf("cancelled: exit %d, stderr %q", code, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the folder holds %d files after a cancelled run", len(entries))
	}
}

// TestGenerateFrom: --from remakes an image from its embedded settings to the same bytes; a flag
// given as well overrides its setting; condition images are looked up beside the PNG and checked.
func TestGenerateFrom(t *testing.T) {
	model := tinyCMF(t)
	dir := t.TempDir()
	first, again, other := filepath.Join(dir, "first.png"), filepath.Join(dir, "again.png"), filepath.Join(dir, "other.png")
	if code, _, stderr := run("generate", "--model", model, "--prompt", "一只戴着巫师帽的水豚", "--negative", "blurry",
		"--cfg", "3", "--size", "64x96", "--steps", "3", "--out", first); code != ExitOK {
		t.Fatalf("first: exit %d: %s", code, stderr)
	}
	if code, _, stderr := run("generate", "--model", model, "--from", first, "--out", again); code != ExitOK || strings.Contains(stderr, "note") {
		t.Fatalf("--from: exit %d: %s", code, stderr)
	}
	decode := func(path string) ([]uint8, *imagefile.Settings) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		m, err := imagefile.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return nrgbaBytes(img), m.Settings
	}
	a, sa := decode(first)
	b, sb := decode(again)
	if !bytes.Equal(a, b) || fmt.Sprint(sa) != fmt.Sprint(sb) {
		t.Errorf("--from made different pixels (%v) or settings:\n%+v\n%+v", bytes.Equal(a, b), sa, sb)
	}
	if code, _, stderr := run("generate", "--model", model, "--from", first, "--seed", fmt.Sprint(sa.Seed+1), "--out", other); code != ExitOK {
		t.Fatalf("--from with --seed: exit %d: %s", code, stderr)
	}
	if _, so := decode(other); so.Seed != sa.Seed+1 || so.Prompt != sa.Prompt || so.CFG != 3 {
		t.Errorf("--from with --seed: settings %+v", so)
	}

	// A PNG made with a condition image that is not beside it, then with a different file of that name.
	edit := filepath.Join(dir, "edit.png")
	s := *sa
	s.Images = []imagefile.ImageRef{{Name: "cat.png", SHA256: strings.Repeat("0", 64)}}
	if err := imagefile.WriteFile(edit, image.NewNRGBA(image.Rect(0, 0, 64, 96)), &s); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run("generate", "--model", model, "--from", edit, "--out", other); code != ExitImage || !strings.Contains(stderr, "cat.png") || !strings.Contains(stderr, "--image") {
		t.Errorf("missing condition image: exit %d, %q", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "cat.png"), []byte("another cat"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run("generate", "--model", model, "--from", edit, "--out", other); code != ExitImage || !strings.Contains(stderr, "SHA-256 differs") {
		t.Errorf("different condition image: exit %d, %q", code, stderr)
	}
	if code, _, stderr := run("generate", "--model", model, "--from", model, "--out", other); code != ExitImage || !strings.Contains(stderr, "not a PNG") {
		t.Errorf("--from a non-PNG: exit %d, %q", code, stderr)
	}
}
