package cli

import (
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/settings"
	"easel/engine/convert"
	"easel/engine/ml/metal"
	"easel/internal/tinymodel"
	"easel/kernels/emu"
)

// TestEmuGenerateOnTheEmulatorHandlesInjectedFaults runs easel generate through the whole Metal
// path on the CPU emulator (--backend emulator): unfaulted; with half's range narrowed and every
// guard forced to 0 (the overflow watch widens them and the image matches the unfaulted one within
// the emulator's bounds, never NaN or black); and with a corrupted GEMM (the first-use self-test
// fails every stage, each runs on the CPU with a notice, and the image is the CPU's exactly). The
// unfaulted run is a first Metal use: it tunes the kernels and caches the choice.
func TestEmuGenerateOnTheEmulatorHandlesInjectedFaults(t *testing.T) {
	if _, err := emu.NewDevice(emu.Options{Fault: &emu.Fault{}}); errors.Is(err, emu.ErrNoCompiler) {
		t.Skipf("Metal emulator unavailable: %v", err)
	}
	// the cortiq profile: q4tp/q8 weights the denoiser's kernels read
	model := tinymodel.Path(t, convert.Options{Profile: convert.ProfileCortiq})
	dir := t.TempDir()
	gen := func(name, backend string, env map[string]string) (*image.NRGBA, string) {
		t.Helper()
		t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, name+"-config")) // a self-test cache per run
		for _, k := range []string{emu.FaultEnv, "EASEL_METAL_ATTN_SHIFT", "EASEL_METAL_QKV_SHIFT", "EASEL_METAL_AO_SHIFT", "EASEL_METAL_FFN_SHIFT", "EASEL_METAL_HID_SHIFT"} {
			t.Setenv(k, env[k])
		}
		out := filepath.Join(dir, name+".png")
		code, _, stderr := run("generate", "--model", model, "--prompt", "a lighthouse at dusk", "--size", "64x64",
			"--steps", "2", "--seed", "7", "--backend", backend, "--out", out, "--verbose")
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		img, err := png.Decode(f)
		if err != nil {
			t.Fatal(err)
		}
		return toNRGBA(img), stderr
	}
	cpuImg, _ := gen("cpu", "cpu", nil)
	clean, cleanLog := gen("clean", "emulator", nil)
	// The first Metal use tunes the kernels for the run's geometry class after the self-test,
	// with a progress line per variant under --verbose, and caches the choice.
	if !strings.Contains(cleanLog, "Tuning for this Mac… gemm: base (1 of") || !strings.Contains(cleanLog, "tuned ") {
		t.Errorf("the first emulator run printed no tuning progress:\n%s", cleanLog)
	}
	if cfg, err := settings.Dir(); err != nil || len(metal.TuneCache{Dir: filepath.Join(cfg, "tuning")}.All()) != 1 {
		t.Errorf("the first emulator run cached no kernel choice (%v)", err)
	}
	zero := map[string]string{emu.FaultEnv: "overflow", "EASEL_METAL_ATTN_SHIFT": "0", "EASEL_METAL_QKV_SHIFT": "0",
		"EASEL_METAL_AO_SHIFT": "0", "EASEL_METAL_FFN_SHIFT": "0", "EASEL_METAL_HID_SHIFT": "0"}
	overflow, overflowLog := gen("overflow", "emulator", zero)
	cfg, err := settings.Dir()
	if err != nil {
		t.Fatal(err)
	}
	st := metal.SelfTestCache{Dir: filepath.Join(cfg, "selftest")}.Latest()
	if st == nil || st.Guards == nil || *st.Guards == (metal.Guards{}) {
		t.Errorf("the self-test under the overflow fault did not remember widened guards: %+v", st)
	} else {
		t.Logf("guards remembered for the model after the overflow: %v", *st.Guards)
	}
	corrupt, corruptLog := gen("corrupt", "emulator", map[string]string{emu.FaultEnv: "corrupt-gemm"})

	if d := maxDiff(clean, cpuImg); d > 2 {
		t.Errorf("the emulator's image differs from the CPU's by %d levels", d)
	}
	if d := maxDiff(overflow, clean); d > 2 || isBlack(overflow) {
		t.Errorf("overflow with guards 0: %d levels from the unfaulted image (black %v)\n%s", d, isBlack(overflow), overflowLog)
	}
	if d := maxDiff(corrupt, cpuImg); d != 0 {
		t.Errorf("corrupt-gemm: %d levels from the CPU's image, want its image exactly", d)
	}
	for _, stage := range []string{"text encoder", "denoiser", "VAE"} {
		if !strings.Contains(corruptLog, "the "+stage+"'s GPU self-test failed") {
			t.Errorf("corrupt-gemm: no notice that the %s's self-test failed:\n%s", stage, corruptLog)
		}
	}
}

func toNRGBA(img image.Image) *image.NRGBA {
	if n, ok := img.(*image.NRGBA); ok {
		return n
	}
	b := img.Bounds()
	n := image.NewNRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			n.Set(x, y, img.At(x, y))
		}
	}
	return n
}

func maxDiff(a, b *image.NRGBA) int {
	if a.Bounds() != b.Bounds() {
		return 256
	}
	m := 0
	for i := range a.Pix {
		d := int(a.Pix[i]) - int(b.Pix[i])
		if d < 0 {
			d = -d
		}
		m = max(m, d)
	}
	return m
}

func isBlack(a *image.NRGBA) bool {
	for i, p := range a.Pix {
		if i%4 != 3 && p != 0 {
			return false
		}
	}
	return true
}

// TestEmuGenerateCancelledDuringTheSelfTest: Ctrl-C during the first-use GPU self-test stops
// easel generate there: exit 130, the file not written, and no self-test result cached (the next
// run checks the GPU again).
func TestEmuGenerateCancelledDuringTheSelfTest(t *testing.T) {
	if _, err := emu.NewDevice(emu.Options{Fault: &emu.Fault{}}); errors.Is(err, emu.ErrNoCompiler) {
		t.Skipf("Metal emulator unavailable: %v", err)
	}
	model := tinymodel.Path(t, convert.Options{Profile: convert.ProfileCortiq})
	config := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config)
	old := interruptContext
	interruptContext = func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // Ctrl-C pressed as the self-test begins
		return ctx, cancel
	}
	defer func() { interruptContext = old }()
	out := filepath.Join(t.TempDir(), "cancelled.png")
	code, _, stderr := run("generate", "--model", model, "--prompt", "a lighthouse", "--size", "64x64",
		"--steps", "2", "--backend", "emulator", "--out", out)
	if code != ExitCancelled || !strings.Contains(stderr, "self-test") || !strings.Contains(stderr, "was not written") {
		t.Errorf("exit %d, stderr %q; want %d, saying the self-test was cancelled and the file not written", code, stderr, ExitCancelled)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s exists after a cancelled run", out)
	}
	cached, _ := filepath.Glob(filepath.Join(config, "Easel", "selftest", "*"))
	if len(cached) != 0 {
		t.Errorf("a cancelled self-test cached %v", cached)
	}
}
