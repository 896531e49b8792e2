package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"easel/app/imagefile"
)

// TestGenerateHiresUpscaler: --hires-upscaler starts the second pass from the learned upscaler's
// picture instead of Lanczos's (another image), and the PNG names it; without --hires, or with a
// file that is not there, it is refused before anything runs.
func TestGenerateHiresUpscaler(t *testing.T) {
	c := byInput(t, false)
	model := tinyCMF(t)
	dir := t.TempDir()
	common := []string{"generate", "--model", model, "--prompt", "a red kite over the sea", "--size", "64x64", "--steps", "2", "--seed", "5", "--backend", "cpu", "--hires", "2"}
	outs := map[string]string{}
	for name, extra := range map[string][]string{"lanczos": nil, "learned": {"--hires-upscaler", c.Files[0]}} {
		out := filepath.Join(dir, name+".png")
		if code, _, stderr := run(append(append(common, extra...), "--out", out)...); code != ExitOK {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		outs[name] = out
	}
	m, err := imagefile.ReadFile(outs["learned"])
	want := strings.TrimSuffix(filepath.Base(c.Files[0]), filepath.Ext(c.Files[0]))
	if err != nil || m.Settings.Hires == nil || m.Settings.Hires.Upscaler != want || !strings.Contains(m.Parameters, "Hires upscaler: "+want) || m.Width != 128 {
		t.Fatalf("learned first stage: %v, %+v, %q", err, m.Settings, m.Parameters)
	}
	if l, _ := imagefile.ReadFile(outs["lanczos"]); l == nil || l.Settings.Hires.Upscaler != "Lanczos" {
		t.Fatalf("the Lanczos run records %+v", l)
	}
	if string(pixelsOf(t, outs["learned"])) == string(pixelsOf(t, outs["lanczos"])) {
		t.Fatal("the learned first stage made Lanczos's image")
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"--hires-upscaler", c.Files[0]}, ExitSettings},
		{[]string{"--hires", "2", "--hires-upscaler", filepath.Join(dir, "gone.pth")}, ExitUpscaler},
	} {
		code, _, stderr := run(append([]string{"generate", "--model", "/nonexistent.cmf", "--prompt", "x"}, tc.args...)...)
		if code != tc.code {
			t.Errorf("%v: exit %d (%s), want %d", tc.args, code, stderr, tc.code)
		}
	}
}
