package cli

import (
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"

	"easel/app/backend"
	"easel/engine/qi21"
	"easel/engine/qi21/qi21metal"
	"easel/engine/quant"
	"easel/internal/testdevice"
	"easel/kernels"
	"easel/kernels/emu"
)

// TestBenchDiTMetal: off Apple silicon, dit-metal refuses without --emulator and says why; with
// it, one block runs on the emulator and every figure is labelled emulator CPU time.
func TestBenchDiTMetal(t *testing.T) {
	if runtime.GOOS != "darwin" || runtime.GOARCH != "arm64" {
		code, _, stderr := run("bench", "dit-metal")
		if code != ExitBackend || !strings.Contains(stderr, "Metal needs a Mac with Apple silicon") || !strings.Contains(stderr, "--emulator") {
			t.Errorf("without --emulator: exit %d, stderr %q", code, stderr)
		}
	}
	testdevice.Device(t, emu.Options{}) // skips without the emulator, as the command would fail
	args := []string{"bench", "dit-metal", "--emulator", "--heads", "2", "--rows", "16", "--prefix", "8"}
	code, stdout, stderr := run(append(args, "--json")...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Device   string
		Emulated bool
		Timing   string
		Blocks   []qi21metal.BlockBench
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if !rep.Emulated || !strings.Contains(rep.Timing, "emulator CPU time") || !strings.Contains(rep.Timing, "not GPU time") ||
		len(rep.Blocks) != 1 || rep.Blocks[0].Codec != "q4tp" || rep.Blocks[0].TargetRows != 16 || rep.Blocks[0].PrefixRows != 8 {
		t.Errorf("report %+v", rep)
	}
	code, stdout, stderr = run(args...)
	if code != ExitOK || !strings.Contains(stdout, "emulator CPU time") || !strings.Contains(stdout, "not a GPU figure") || strings.Contains(stdout, "ms GPU time") {
		t.Errorf("exit %d, output %q (%s): want every time labelled emulator CPU time", code, stdout, stderr)
	}
	t.Log(stdout)
}

// TestBenchDiTMetalVariants: --variants lists the baseline and every variant of each op class
// (kernels.GemmVariants, kernels.FlashVariants) for both codecs with its parity against the
// baseline, which on the emulator is bit-identical, or within ParityBound for the variants that
// change the accumulation order; nothing is skipped (the emulator has the tensor-op subset).
func TestBenchDiTMetalVariants(t *testing.T) {
	testdevice.Device(t, emu.Options{})
	code, stdout, stderr := run("bench", "dit-metal", "--emulator", "--variants", "--json", "--heads", "1", "--rows", "16", "--prefix", "40", "--codecs", "q4tp,q8_2f")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Emulated bool
		Variants []qi21metal.VariantBench
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	want := map[string]bool{}
	for _, codec := range []string{"q4tp", "q8_2f"} {
		for _, v := range kernels.GemmVariants {
			want[codec+"/gemm/"+v.Name] = true
		}
		for _, v := range kernels.FlashVariants {
			want[codec+"/attn/"+v.Name] = true
		}
	}
	for _, v := range rep.Variants {
		key := v.Codec + "/" + v.Class + "/" + v.Variant
		if !want[key] {
			t.Errorf("unexpected or repeated row %s", key)
		}
		delete(want, key)
		if v.Skipped != "" || (v.Parity != "bit-identical" && v.Parity != "within") || v.DeviceMS <= 0 {
			t.Errorf("%s: skipped %q, parity %s (%.3g), %.3g ms", key, v.Skipped, v.Parity, v.RelErr, v.DeviceMS)
		}
	}
	if len(want) > 0 || !rep.Emulated {
		t.Errorf("missing rows %v (emulated %v)", want, rep.Emulated)
	}
}

// TestBenchDiTMetalTune: --tune times the declared variants on the emulator, caches the choice in
// the app-support folder (where generation finds it for requests of the same geometry class, and easel diagnose) and prints the
// summary; the cache is removed afterwards so the other tests run the baseline kernels.
func TestBenchDiTMetalTune(t *testing.T) {
	// The command tunes on the emulator itself (--emulator), and the cache is keyed by that
	// device's name: the test must read it back with the same device, not the opaque one.
	testdevice.EmulatorOnly(t, "device name (the tuning cache written by bench dit-metal --emulator is keyed by it)")
	dev := testdevice.Device(t, emu.Options{})
	dir := backend.TuningDir()
	if dir == "" {
		t.Fatal("no app-support folder")
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	code, stdout, stderr := run("bench", "dit-metal", "--emulator", "--tune", "--heads", "1", "--rows", "16", "--prefix", "8")
	if code != ExitOK || !strings.Contains(stdout, "gemm: ") || !strings.Contains(stdout, "attn: ") || !strings.Contains(stderr, "Tuning for this Mac") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	cfg := qi21.PublishedConfig()
	cfg.Heads = 1
	r := backend.TunedVariants(dir, dev, qi21metal.TuneGeometry(cfg, quant.Q4TP, 16, 8))
	if r == nil || len(r.Choices) != 2 {
		t.Fatalf("the cached choice for %s: %+v", dev.Name(), r)
	}
	t.Log(stdout)
}
