package cli

import (
	"archive/zip"
	"bytes"
	"errors"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/imagefile"
	"easel/internal/golden"
	"easel/kernels/emu"
)

func upscaleCases(t *testing.T) []*golden.UpscaleCase {
	t.Helper()
	cs, err := golden.UpscaleCases()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// byInput picks the case with the largest (or smallest) input.
func byInput(t *testing.T, largest bool) *golden.UpscaleCase {
	var best *golden.UpscaleCase
	for _, c := range upscaleCases(t) {
		n := c.Input.Rect.Dx() * c.Input.Rect.Dy()
		if best == nil || (largest && n > best.Input.Rect.Dx()*best.Input.Rect.Dy()) || (!largest && n < best.Input.Rect.Dx()*best.Input.Rect.Dy()) {
			best = c
		}
	}
	return best
}

func maxLevels(a, b *image.NRGBA) int {
	worst := 0
	for i := range a.Pix {
		d := int(a.Pix[i]) - int(b.Pix[i])
		worst = max(worst, d, -d)
	}
	return worst
}

// TestUpscaleTiledMatchesUntiled: `easel upscale --tile 16` on the largest case (the one made for
// tiled-against-untiled checks) is within one level of the untiled run, which matches the case's
// output_u8; the PNG names the upscaler.
func TestUpscaleTiledMatchesUntiled(t *testing.T) {
	c := byInput(t, true)
	dir := t.TempDir()
	in := writePNG(t, dir, "in.png", c.Input)
	outs := map[string]*image.NRGBA{}
	for name, tile := range map[string]string{"whole": "-1", "tiled": "16"} {
		out := filepath.Join(dir, name+".png")
		code, stdout, stderr := run("upscale", "--model", c.Files[0], "--tile", tile, "--backend", "cpu", in, "--out", out)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		if !strings.Contains(stdout, "wrote "+out) {
			t.Fatalf("%s: stdout %q", name, stdout)
		}
		outs[name] = readPNG(t, out)
		md, err := imagefile.ReadFile(out)
		if err != nil || !strings.Contains(md.Parameters, "Postprocess upscaler: "+strings.TrimSuffix(filepath.Base(c.Files[0]), filepath.Ext(c.Files[0]))) {
			t.Fatalf("%s: parameters %q (%v) do not name the upscaler", name, md.Parameters, err)
		}
	}
	if worst, _, err := c.U8Diff(outs["whole"]); err != nil || worst > 1 {
		t.Fatalf("untiled differs from output_u8 by %d levels (%v)", worst, err)
	}
	if d := maxLevels(outs["whole"], outs["tiled"]); d > 1 {
		t.Fatalf("--tile 16 differs from untiled by %d levels", d)
	}
}

// TestUpscaleKeepsTheRecipe: an Easel PNG's settings survive an upscale to another scale (reached
// with Lanczos after the network), with the upscale recorded.
func TestUpscaleKeepsTheRecipe(t *testing.T) {
	c := byInput(t, false)
	dir := t.TempDir()
	in := filepath.Join(dir, "made.png")
	s := &imagefile.Settings{Prompt: "a lighthouse at dusk", Width: c.Input.Rect.Dx(), Height: c.Input.Rect.Dy(), Steps: 9, CFG: 1, Seed: 42, Sampler: "Euler", Model: "m.cmf", EaselVersion: "test"}
	if err := imagefile.WriteFile(in, c.Input, s); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "big.png")
	code, _, stderr := run("upscale", "--model", c.Files[0], "--scale", "3", "--backend", "cpu", in, "--out", out)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	md, err := imagefile.ReadFile(out)
	if err != nil || md.Settings == nil {
		t.Fatalf("no settings in the result: %v", err)
	}
	u := md.Settings.Upscale
	if md.Settings.Prompt != s.Prompt || md.Settings.Seed != 42 || u == nil || u.Width != 3*s.Width || u.Height != 3*s.Height || md.Width != 3*s.Width || u.Network == "" {
		t.Fatalf("settings %+v, upscale %+v, size %d×%d", md.Settings, u, md.Width, md.Height)
	}
}

// TestUpscaleRefusals: a .pth that asks to run os.system is refused with a sentence and runs
// nothing; a truncated file, a file of another network, a missing one and a bad picture get
// sentences and their exit codes.
func TestUpscaleRefusals(t *testing.T) {
	c := byInput(t, false)
	dir := t.TempDir()
	in := writePNG(t, dir, "in.png", c.Input)
	marker := filepath.Join(dir, "ran")
	evil := filepath.Join(dir, "4x-Evil.pth")
	cmd := "touch " + marker
	pkl := append(append([]byte("\x80\x02cos\nsystem\nq\x00X"), byte(len(cmd)), 0, 0, 0), cmd...)
	pkl = append(pkl, "\x85R."...)
	var zb bytes.Buffer
	z := zip.NewWriter(&zb)
	w, _ := z.Create("archive/data.pkl")
	w.Write(pkl)
	z.Close()
	os.WriteFile(evil, zb.Bytes(), 0o644)
	var pth string
	for _, f := range c.Files {
		if filepath.Ext(f) == ".pth" {
			pth = f
		}
	}
	if pth == "" {
		pth = c.Files[0]
	}
	whole, _ := os.ReadFile(pth)
	cut := filepath.Join(dir, "cut"+filepath.Ext(pth))
	os.WriteFile(cut, whole[:len(whole)*2/3], 0o644)
	ref, _ := golden.RefCases("upscale")
	notPic := filepath.Join(dir, "notes.png")
	os.WriteFile(notPic, []byte("hello"), 0o644)
	for _, tc := range []struct {
		name  string
		model string
		pic   string
		code  int
		want  string
	}{
		{"os.system", evil, in, ExitUpscaler, "asks to run os.system"},
		{"truncated", cut, in, ExitUpscaler, "download it again"},
		{"not an upscaler", ref[0], in, ExitUpscaler, "not an upscaler Easel runs"},
		{"missing", filepath.Join(dir, "gone.pth"), in, ExitUpscaler, "no such file"},
		{"not a picture", c.Files[0], notPic, ExitImage, "notes.png"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".png")
			code, _, stderr := run("upscale", "--model", tc.model, "--upscalers", dir, "--backend", "cpu", tc.pic, "--out", out)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.want)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Fatal("a refused upscale wrote its output")
			}
		})
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the .pth's command ran")
	}
	if code, _, _ := run("upscale", in, "--out", filepath.Join(dir, "x.png")); code != ExitUsage {
		t.Fatalf("no --model: exit %d", code)
	}
}

// TestUpscaleByName: --model names a file of the --upscalers folder.
func TestUpscaleByName(t *testing.T) {
	c := byInput(t, false)
	dir := t.TempDir()
	lib := filepath.Join(dir, "lib")
	os.Mkdir(lib, 0o755)
	b, _ := os.ReadFile(c.Files[0])
	os.WriteFile(filepath.Join(lib, "4x-Mine"+filepath.Ext(c.Files[0])), b, 0o644)
	in := writePNG(t, dir, "in.png", c.Input)
	out := filepath.Join(dir, "out.png")
	if code, _, stderr := run("upscale", "--model", "4x-Mine", "--upscalers", lib, "--backend", "cpu", in, "--out", out); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if worst, _, err := c.U8Diff(readPNG(t, out)); err != nil || worst > 1 {
		t.Fatalf("differs from output_u8 by %d (%v)", worst, err)
	}
}

// TestEmuUpscale: --backend emulator runs the Metal path on the smallest case within the
// emulator's bound (one level of output_u8).
func TestEmuUpscale(t *testing.T) {
	if _, err := emu.NewDevice(emu.Options{}); errors.Is(err, emu.ErrNoCompiler) {
		if os.Getenv("EASEL_REQUIRE_EMULATOR") != "" {
			t.Fatal(err)
		}
		t.Skipf("Metal emulator unavailable: %v", err)
	}
	c := byInput(t, false)
	dir := t.TempDir()
	in := writePNG(t, dir, "in.png", c.Input)
	out := filepath.Join(dir, "out.png")
	code, stdout, stderr := run("upscale", "--model", c.Files[0], "--backend", "emulator", in, "--out", out)
	if code != ExitOK || strings.Contains(stdout, "on CPU") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	if worst, _, err := c.U8Diff(readPNG(t, out)); err != nil || worst > 1 {
		t.Fatalf("differs from output_u8 by %d levels (%v)", worst, err)
	}
}
