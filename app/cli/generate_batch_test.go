package cli

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"easel/app/imagefile"
	"easel/internal/testdevice"
	"easel/kernels/emu"
)

// pixelsOf is a saved PNG's pixels.
func pixelsOf(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return nrgbaBytes(img)
}

// jsonLines parses --json output.
func jsonLines(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %q is not JSON: %v", line, err)
		}
		out = append(out, ev)
	}
	return out
}

// checkGenerateBatch: `--count 3 --seed 7` writes three images bit-identical to the single runs
// with seeds 7, 8 and 9, and the events show one prefill for the batch, each step's image and
// seed, and each image saved.
func checkGenerateBatch(t *testing.T, backend string, steps int) {
	model := tinyCMF(t)
	dir := t.TempDir()
	common := []string{"generate", "--model", model, "--prompt", "a lighthouse", "--size", "64x64", "--steps", strconv.Itoa(steps), "--backend", backend}
	code, stdout, stderr := run(append(common, "--count", "3", "--seed", "7", "--out", filepath.Join(dir, "batch.png"), "--json")...)
	if code != ExitOK {
		t.Fatalf("batch: exit %d: %s", code, stderr)
	}
	prefills, saved := 0, 0
	stepsOf := map[float64]int{}
	for _, ev := range jsonLines(t, stdout) {
		switch ev["stage"] {
		case "prefill":
			prefills++
		case "denoising":
			if ev["step"] != nil {
				img := ev["image"].(float64)
				stepsOf[img]++
				if ev["seed"].(float64) != 6+img || ev["images"].(float64) != 3 {
					t.Errorf("image %g's step event: seed %v, images %v", img, ev["seed"], ev["images"])
				}
			}
		case "saved":
			saved++
			i := ev["image"].(float64)
			if ev["path"] != filepath.Join(dir, "batch-"+strconv.Itoa(int(i))+".png") || ev["seed"].(float64) != 6+i {
				t.Errorf("saved event %v", ev)
			}
		}
	}
	if prefills != 1 || saved != 3 || len(stepsOf) != 3 || stepsOf[1] != steps || stepsOf[3] != steps {
		t.Errorf("%d prefill events (want 1), %d saved (want 3), steps per image %v", prefills, saved, stepsOf)
	}
	batchID := ""
	for i := 1; i <= 3; i++ {
		single := filepath.Join(dir, "single.png")
		seed := strconv.Itoa(6 + i)
		if code, _, stderr := run(append(common, "--seed", seed, "--out", single)...); code != ExitOK {
			t.Fatalf("single run: exit %d: %s", code, stderr)
		}
		if !bytes.Equal(pixelsOf(t, filepath.Join(dir, "batch-"+strconv.Itoa(i)+".png")), pixelsOf(t, single)) {
			t.Errorf("%s: batch image %d differs from the single run with seed %s", backend, i, seed)
		}
		m, err := imagefile.ReadFile(filepath.Join(dir, "batch-"+strconv.Itoa(i)+".png"))
		if err != nil || strconv.FormatUint(m.Settings.Seed, 10) != seed {
			t.Fatalf("batch image %d records seed %v (%v)", i, m.Settings, err)
		}
		// Each records its place in the batch, under one identity (the history groups by it).
		if b := m.Settings.Batch; b == nil || b.Index != i-1 || b.Count != 3 || (batchID != "" && b.ID != batchID) {
			t.Errorf("batch image %d records batch %+v, want image %d of 3 of batch %q", i, b, i-1, batchID)
		} else {
			batchID = b.ID
		}
		if s, err := imagefile.ReadFile(single); err != nil || s.Settings.Batch != nil {
			t.Errorf("the single run records a batch (%v)", err)
		}
	}
}

// checkGenerateVariation: --variation-strength 0 is the base image and 1 the variation seed's own
// image, bit for bit; the PNG records the variation.
func checkGenerateVariation(t *testing.T, backend string, steps int) {
	model := tinyCMF(t)
	dir := t.TempDir()
	common := []string{"generate", "--model", model, "--prompt", "a lighthouse", "--size", "64x64", "--steps", strconv.Itoa(steps), "--backend", backend}
	path := func(n string) string { return filepath.Join(dir, n+".png") }
	for _, c := range [][]string{
		{"--seed", "7", "--out", path("base")},
		{"--seed", "1234", "--out", path("other")},
		{"--seed", "7", "--variation-seed", "1234", "--variation-strength", "0", "--out", path("v0")},
		{"--seed", "7", "--variation-seed", "1234", "--variation-strength", "1", "--out", path("v1")},
		{"--seed", "7", "--variation-seed", "1234", "--variation-strength", "0.2", "--out", path("v02")},
	} {
		if code, _, stderr := run(append(common, c...)...); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", c, code, stderr)
		}
	}
	if !bytes.Equal(pixelsOf(t, path("v0")), pixelsOf(t, path("base"))) {
		t.Errorf("%s: variation strength 0 differs from the base image", backend)
	}
	if !bytes.Equal(pixelsOf(t, path("v1")), pixelsOf(t, path("other"))) {
		t.Errorf("%s: variation strength 1 differs from the variation seed's own image", backend)
	}
	if bytes.Equal(pixelsOf(t, path("v02")), pixelsOf(t, path("base"))) {
		t.Errorf("%s: variation strength 0.2 is the base image", backend)
	}
	m, err := imagefile.ReadFile(path("v02"))
	if err != nil || m.Settings.VariationSeed != 1234 || m.Settings.VariationStrength != 0.2 || !strings.Contains(m.Parameters, "Variation seed: 1234, Variation seed strength: 0.2") {
		t.Errorf("variation recorded: %+v %q %v", m.Settings, m.Parameters, err)
	}
}

// checkGenerateHires: --hires 2 on a 256² run writes a 512² image whose second pass ran
// N − int(N − N·strength) steps (4 − int(4 − 1.4) = 2), and the PNG records both passes.
func checkGenerateHires(t *testing.T, backend string) {
	model := tinyCMF(t)
	out := filepath.Join(t.TempDir(), "big.png")
	code, stdout, stderr := run("generate", "--model", model, "--prompt", "a lighthouse", "--size", "256x256", "--steps", "4", "--seed", "3",
		"--hires", "2", "--backend", backend, "--out", out, "--json")
	if code != ExitOK {
		t.Fatalf("hires: exit %d: %s", code, stderr)
	}
	second := 0
	for _, ev := range jsonLines(t, stdout) {
		if ev["stage"] == "denoising" && ev["step"] != nil && ev["pass"] == 2.0 {
			second++
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil || img.Bounds().Dx() != 512 || img.Bounds().Dy() != 512 {
		t.Fatalf("%s: the second pass's image is %v (%v), want 512×512", backend, img.Bounds(), err)
	}
	m, err := imagefile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	h := m.Settings.Hires
	if h == nil || h.Width != 512 || h.Height != 512 || h.Factor != 2 || h.Strength != 0.35 || h.Steps != 4 || h.StepsRun != 2 || second != 2 {
		t.Errorf("%s: hires %+v, %d second-pass step events; want 512², 4 steps of which 2 run", backend, h, second)
	}
	if m.Settings.Width != 256 || m.Settings.Steps != 4 || !strings.Contains(m.Parameters, "Size: 256x256") || !strings.Contains(m.Parameters, "Hires upscale: 2, Hires steps: 4, Hires upscaler: Lanczos") {
		t.Errorf("first pass recorded: %+v, %q", m.Settings, m.Parameters)
	}
}

func TestGenerateBatchIsSingleRuns(t *testing.T) { checkGenerateBatch(t, "cpu", 3) }
func TestGenerateVariationEnds(t *testing.T)     { checkGenerateVariation(t, "cpu", 3) }
func TestGenerateHiresSecondPass(t *testing.T)   { checkGenerateHires(t, "cpu") }

// On the emulated Metal device, within the package's time: a batch of 2 against the single run
// of its second seed (the pipeline's TestEmuBatchIsSingleRunsOnMetal and
// TestEmuVariationEndsOnMetal check every image and the variation ends there), and the second
// pass at 64² → 128².
func TestEmuGenerateBatchAndHires(t *testing.T) {
	testdevice.Device(t, emu.Options{})
	model := tinyCMF(t)
	dir := t.TempDir()
	common := []string{"generate", "--model", model, "--prompt", "a lighthouse", "--size", "64x64", "--steps", "2", "--backend", "emulator"}
	code, stdout, stderr := run(append(common, "--count", "2", "--seed", "7", "--out", filepath.Join(dir, "batch.png"), "--json")...)
	if code != ExitOK {
		t.Fatalf("batch: exit %d: %s", code, stderr)
	}
	prefills := 0
	for _, ev := range jsonLines(t, stdout) {
		if ev["stage"] == "prefill" {
			prefills++
		}
	}
	if code, _, stderr := run(append(common, "--seed", "8", "--out", filepath.Join(dir, "single.png"))...); code != ExitOK {
		t.Fatalf("single: exit %d: %s", code, stderr)
	}
	if prefills != 1 || !bytes.Equal(pixelsOf(t, filepath.Join(dir, "batch-2.png")), pixelsOf(t, filepath.Join(dir, "single.png"))) {
		t.Errorf("emulator: %d prefills; the batch's second image equals the single run with seed 8: %v", prefills,
			bytes.Equal(pixelsOf(t, filepath.Join(dir, "batch-2.png")), pixelsOf(t, filepath.Join(dir, "single.png"))))
	}
	out := filepath.Join(dir, "big.png")
	if code, _, stderr := run(append(common, "--seed", "3", "--steps", "4", "--hires", "2", "--out", out)...); code != ExitOK {
		t.Fatalf("hires: exit %d: %s", code, stderr)
	}
	m, err := imagefile.ReadFile(out)
	if err != nil || m.Width != 128 || m.Height != 128 || m.Settings.Hires == nil || m.Settings.Hires.StepsRun != 2 {
		t.Errorf("emulator hires: %d×%d, %+v, %v", m.Width, m.Height, m.Settings.Hires, err)
	}
}

// TestGenerateBatchFlagsAreChecked: impossible batch, variation and second-pass flags exit 7 or
// 8 before the model is opened.
func TestGenerateBatchFlagsAreChecked(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"--count", "0"}, ExitSettings},
		{[]string{"--count", "101"}, ExitSettings},
		{[]string{"--variation-strength", "2"}, ExitSettings},
		{[]string{"--variation-seed", "5"}, ExitSettings},
		{[]string{"--variation-seed", "x", "--variation-strength", "0.2"}, ExitSettings},
		{[]string{"--hires", "1"}, ExitSize},
		{[]string{"--hires-strength", "0.5"}, ExitSettings},
		{[]string{"--hires", "2", "--hires-strength", "0"}, ExitSettings},
	} {
		code, _, stderr := run(append([]string{"generate", "--model", "/nonexistent.cmf", "--prompt", "x"}, c.args...)...)
		if code != c.code {
			t.Errorf("%v: exit %d (%s), want %d", c.args, code, stderr, c.code)
		}
	}
}
