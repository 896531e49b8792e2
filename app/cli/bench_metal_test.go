package cli

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"easel/engine/qi21/qi21metal"
	"easel/kernels/emu"
	"easel/kernels/emu/emutest"
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
	emutest.Device(t, emu.Options{}) // skips without the emulator, as the command would fail
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
