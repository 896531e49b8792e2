package cli

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/imagefile"
	"easel/app/imagework"
	"easel/engine/convert"
	"easel/internal/testdevice"
	"easel/internal/tinymodel"
	"easel/kernels/emu"
)

// writePNG saves img as a plain PNG in dir.
func writePNG(t *testing.T, dir, name string, img image.Image) string {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// startPicture is a 64×64 opaque picture with structure (gradients and a block).
func startPicture() *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, 64, 64))
	for y := range 64 {
		for x := range 64 {
			i := img.PixOffset(x, y)
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = uint8(4*x), uint8(4*y), uint8(2*(x+y)), 255
			if x > 36 && x < 56 && y > 8 && y < 30 {
				img.Pix[i], img.Pix[i+1], img.Pix[i+2] = 230, 40, 40
			}
		}
	}
	return img
}

// leftMask repaints the left 16 columns of a 64×64 image.
func leftMask(w, h int) *image.Gray {
	m := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w / 4 {
			m.Pix[y*m.Stride+x] = 255
		}
	}
	return m
}

// readPNG is a saved image's pixels as NRGBA.
func readPNG(t *testing.T, path string) *image.NRGBA {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	out := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	copy(out.Pix, nrgbaBytes(img))
	return out
}

// checkStrengthOne: --init X --strength 1 is the text-to-image PNG of the same seed, bit for bit.
func checkStrengthOne(t *testing.T, model string, extra ...string) {
	dir := t.TempDir()
	init := writePNG(t, dir, "start.png", startPicture())
	base := append([]string{"generate", "--model", model, "--prompt", "a harbour at dawn", "--size", "64x64", "--steps", "3", "--seed", "21"}, extra...)
	t2i, i2i := filepath.Join(dir, "t2i.png"), filepath.Join(dir, "i2i.png")
	if code, _, stderr := run(append(base, "--out", t2i)...); code != ExitOK {
		t.Fatalf("text to image: exit %d: %s", code, stderr)
	}
	if code, _, stderr := run(append(base, "--out", i2i, "--init", init, "--strength", "1")...); code != ExitOK {
		t.Fatalf("--strength 1: exit %d: %s", code, stderr)
	}
	if !bytes.Equal(readPNG(t, t2i).Pix, readPNG(t, i2i).Pix) {
		t.Error("--init X --strength 1 differs from the text-to-image picture of the same seed")
	}
}

// checkMaskKeepsOutside: with a mask the saved image is the start image outside the grown and
// feathered mask, pixel for pixel, and differs inside it; the PNG records the start image, the
// mask and the settings.
func checkMaskKeepsOutside(t *testing.T, model string, extra ...string) {
	dir := t.TempDir()
	start := startPicture()
	init := writePNG(t, dir, "start.png", start)
	mask := writePNG(t, dir, "mask.png", leftMask(64, 64))
	out := filepath.Join(dir, "inpaint.png")
	args := append([]string{"generate", "--model", model, "--prompt", "a lighthouse", "--steps", "4", "--seed", "5",
		"--init", init, "--mask", mask, "--out", out}, extra...)
	if code, _, stderr := run(args...); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := readPNG(t, out)
	feathered := imagework.Feather(imagework.Grow(leftMask(64, 64), defaultMaskGrow), defaultMaskBlur)
	kept, changed := 0, 0
	for y := range 64 {
		for x := range 64 {
			g, s := got.NRGBAAt(x, y), start.NRGBAAt(x, y)
			switch feathered.GrayAt(x, y).Y {
			case 0:
				kept++
				if g != s {
					t.Fatalf("(%d, %d) outside the mask is %v, the start image has %v", x, y, g, s)
				}
			case 255:
				if g != s {
					changed++
				}
			}
		}
	}
	if kept == 0 || changed == 0 {
		t.Errorf("%d pixels kept outside the mask, %d changed inside it: want both", kept, changed)
	}
	m, err := imagefile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s := m.Settings
	if s.Init == nil || s.Init.Strength != 0.6 || s.Init.Mask == nil || s.Init.Mask.Name != "mask.png" || s.Init.MaskGrow != defaultMaskGrow ||
		s.Init.MaskBlur != defaultMaskBlur || !s.Init.KeepOriginal || s.InitImage == nil || !bytes.Equal(s.InitImage.Pix, start.Pix) || s.MaskImage == nil {
		t.Errorf("recorded start image settings %+v (image %v, mask %v)", s.Init, s.InitImage != nil, s.MaskImage != nil)
	}
	if !strings.Contains(m.Parameters, "Denoising strength: 0.6") || !strings.Contains(m.Parameters, "Mask blur: 4") {
		t.Errorf("parameters %q", m.Parameters)
	}
	// --from remakes it from the embedded start image and mask.
	again := filepath.Join(dir, "again.png")
	if code, _, stderr := run(append([]string{"generate", "--model", model, "--from", out, "--out", again}, extra...)...); code != ExitOK {
		t.Fatalf("--from: exit %d: %s", code, stderr)
	}
	if !bytes.Equal(readPNG(t, again).Pix, got.Pix) {
		t.Error("--from of an inpainted image made different pixels")
	}
}

func TestGenerateInitStrengthOneIsTextToImage(t *testing.T) { checkStrengthOne(t, tinyCMF(t)) }

func TestGenerateMaskKeepsTheStartImageOutside(t *testing.T) {
	checkMaskKeepsOutside(t, tinyCMF(t))
}

// q8Model is the tiny model in the q8 profile the Metal kernels read.
func q8Model(t *testing.T) string {
	testdevice.Device(t, emu.Options{}) // skips without the emulator, as --backend emulator would fail
	return tinymodel.Path(t, convert.Options{Profile: convert.ProfileQ8})
}

func TestEmuGenerateInitStrengthOneIsTextToImage(t *testing.T) {
	checkStrengthOne(t, q8Model(t), "--backend", "emulator")
}

func TestEmuGenerateMaskKeepsTheStartImageOutside(t *testing.T) {
	checkMaskKeepsOutside(t, q8Model(t), "--backend", "emulator")
}

// TestGenerateStrengthRunsThatShareOfTheSteps: --strength 0.5 --steps 8 runs exactly 4 steps,
// and the --json step events count those 4.
func TestGenerateStrengthRunsThatShareOfTheSteps(t *testing.T) {
	checkStrengthRunsThatShare(t, tinyCMF(t))
}

func TestEmuGenerateStrengthRunsThatShareOfTheSteps(t *testing.T) {
	checkStrengthRunsThatShare(t, q8Model(t), "--backend", "emulator")
}

func checkStrengthRunsThatShare(t *testing.T, model string, extra ...string) {
	dir := t.TempDir()
	init := writePNG(t, dir, "start.png", startPicture())
	code, stdout, stderr := run(append([]string{"generate", "--model", model, "--prompt", "a harbour", "--steps", "8", "--strength", "0.5",
		"--init", init, "--seed", "3", "--json", "--out", filepath.Join(dir, "half.png")}, extra...)...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var steps []int
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var ev struct {
			Stage string `json:"stage"`
			Step  int    `json:"step"`
			Steps int    `json:"steps"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if ev.Step > 0 {
			steps = append(steps, ev.Step)
			if ev.Steps != 4 {
				t.Errorf("step event %d says %d steps, want 4", ev.Step, ev.Steps)
			}
		}
	}
	if len(steps) != 4 || steps[3] != 4 {
		t.Errorf("step events %v, want 1…4", steps)
	}
}

// TestGenerateExtend: --extend 0,0,64,0 makes an image 64 px wider whose original part is kept
// (exactly, away from the edge the mask fades into).
func TestGenerateExtend(t *testing.T) { checkExtend(t, tinyCMF(t)) }

func TestEmuGenerateExtend(t *testing.T) { checkExtend(t, q8Model(t), "--backend", "emulator") }

func checkExtend(t *testing.T, model string, extra ...string) {
	dir := t.TempDir()
	start := startPicture()
	init := writePNG(t, dir, "start.png", start)
	out := filepath.Join(dir, "wider.png")
	if code, _, stderr := run(append([]string{"generate", "--model", model, "--prompt", "a harbour", "--steps", "3", "--seed", "8",
		"--init", init, "--extend", "0,0,64,0", "--out", out}, extra...)...); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := readPNG(t, out)
	if got.Rect.Dx() != 128 || got.Rect.Dy() != 64 {
		t.Fatalf("extended image is %v, want 128×64", got.Rect)
	}
	p, err := imagework.Prepare(start, imagework.Options{MaskGrow: defaultMaskGrow, MaskBlur: defaultMaskBlur, KeepOriginal: true, Extend: imagework.Margins{Right: 64}})
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for y := range 64 {
		for x := range 64 {
			if p.PasteMask.GrayAt(x, y).Y == 0 {
				kept++
				if got.NRGBAAt(x, y) != start.NRGBAAt(x, y) {
					t.Fatalf("original pixel (%d, %d) changed", x, y)
				}
			}
		}
	}
	if kept < 64*16 {
		t.Errorf("only %d of the original's pixels are kept exactly", kept)
	}
	m, err := imagefile.ReadFile(out)
	if err != nil || m.Settings.Init == nil || m.Settings.Init.Strength != 1 || m.Settings.Init.Extend != [4]int{0, 0, 64, 0} {
		t.Errorf("recorded %+v, %v; want strength 1 and the extension", m.Settings.Init, err)
	}
}

// TestGenerateCropOffset: --crop-offset moves the crop a --size makes of the start image; the PNG
// records the offset and holds the start image, so the crop can be made again.
func TestGenerateCropOffset(t *testing.T) {
	dir := t.TempDir()
	init := writePNG(t, dir, "start.png", startPicture())
	out := filepath.Join(dir, "right.png")
	if code, _, stderr := run("generate", "--model", tinyCMF(t), "--prompt", "a harbour", "--steps", "2", "--seed", "8",
		"--init", init, "--size", "32x64", "--crop-offset", "100,0", "--out", out); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m, err := imagefile.ReadFile(out)
	if err != nil || m.Settings.Init == nil || m.Settings.Init.CropOffset != [2]int{100, 0} || m.Settings.Init.Fit != "cover" {
		t.Fatalf("recorded %+v, %v; want the crop offset 100,0", m.Settings.Init, err)
	}
	if got := readPNG(t, out); got.Rect.Dx() != 32 || got.Rect.Dy() != 64 {
		t.Errorf("the image is %v, want 32×64", got.Rect)
	}
}

// TestGenerateStartImageBadInputs: the bad inputs of working on an image, each with its exit
// code and message, and no file written; a mask of another size is scaled with a notice.
func TestGenerateStartImageBadInputs(t *testing.T) {
	model := tinyCMF(t)
	dir := t.TempDir()
	init := writePNG(t, dir, "start.png", startPicture())
	black := writePNG(t, dir, "black.png", image.NewGray(image.Rect(0, 0, 64, 64)))
	huge := filepath.Join(dir, "huge.png")
	if err := os.WriteFile(huge, hugePNG(t), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.png")
	base := []string{"generate", "--model", model, "--prompt", "a cat", "--steps", "2", "--out", out}
	for _, tc := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"strength 0", []string{"--init", init, "--strength", "0"}, ExitSettings, "(0, 1]"},
		{"strength 1.5", []string{"--init", init, "--strength", "1.5"}, ExitSettings, "(0, 1]"},
		{"black mask", []string{"--init", init, "--mask", black}, ExitImage, "nothing to repaint"},
		{"oversized start image", []string{"--init", huge}, ExitImage, "huge.png"},
		{"missing start image", []string{"--init", filepath.Join(dir, "gone.png")}, ExitImage, "gone.png"},
		{"mask without a start image", []string{"--mask", black}, ExitUsage, "--init"},
		{"bad extension", []string{"--init", init, "--extend", "0,0,0"}, ExitSize, "left,top,right,bottom"},
		{"bad crop offset", []string{"--init", init, "--crop-offset", "12"}, ExitSize, "as X,Y"},
		{"crop offset without a start image", []string{"--crop-offset", "12,0"}, ExitUsage, "--init"},
		// The extended canvas (64×64 grown to 128×64) sets the size: a --size that would crop the
		// extension away is refused naming both.
		{"size against extension", []string{"--init", init, "--extend", "0,0,64,0", "--size", "64x64"}, ExitSize, "--size 64x64 and --extend 0,0,64,0 disagree: the start image (64×64) extended is a 128×64 canvas"},
		{"aspect against extension", []string{"--init", init, "--extend", "0,0,64,0", "--aspect", "1:1"}, ExitSize, "the extended canvas (128×64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(append(append([]string{}, base...), tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.says) {
				t.Errorf("exit %d, stderr %q; want exit %d and a message with %q", code, stderr, tc.code, tc.says)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
				os.Remove(out)
			}
		})
	}
	small := writePNG(t, dir, "small-mask.png", leftMask(32, 32))
	code, _, stderr := run(append(append([]string{}, base...), "--init", init, "--mask", small)...)
	if code != ExitOK || !strings.Contains(stderr, "scaled the mask") {
		t.Errorf("a 32×32 mask for a 64×64 image: exit %d, stderr %q; want it scaled with a notice", code, stderr)
	}
}

// TestGenerateExtendWithItsOwnSize: a --size equal to the extended canvas is accepted.
func TestGenerateExtendWithItsOwnSize(t *testing.T) { checkExtend(t, tinyCMF(t), "--size", "128x64") }

// TestGenerateSaysWhenItFloorsTheSize: --size 80x64 is made 64×64 and said on stderr.
func TestGenerateSaysWhenItFloorsTheSize(t *testing.T) {
	out := filepath.Join(t.TempDir(), "floored.png")
	code, _, stderr := run("generate", "--model", tinyCMF(t), "--prompt", "a pier", "--steps", "2", "--size", "80x64", "--out", out)
	if code != ExitOK || !strings.Contains(stderr, "--size 80x64 is made 64×64") {
		t.Fatalf("exit %d, stderr %q; want the floored size said", code, stderr)
	}
	if got := readPNG(t, out); got.Rect.Dx() != 64 || got.Rect.Dy() != 64 {
		t.Errorf("made %v", got.Rect)
	}
}
