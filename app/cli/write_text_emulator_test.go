package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"easel/engine/convert"
	"easel/internal/testdevice"
	"easel/internal/tinymodel"
	"easel/kernels/emu"
)

// expand runs on the emulated Metal device (--backend emulator), and when the device fails every
// command buffer (EASEL_EMU_FAULT=oom:0) the text is written on the CPU with a notice, and the
// report says so.
func TestEmuExpandOnTheEmulatorFallsBackWhenTheDeviceDeclines(t *testing.T) {
	testdevice.Device(t, emu.Options{Fault: &emu.Fault{}})
	model := tinymodel.Path(t, convert.Options{Profile: convert.ProfileCortiq})
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(t.TempDir(), "config"))
	expand := func() (textReport, string) {
		t.Helper()
		code, out, errOut := run("expand", "--model", model, "a lighthouse", "--backend", "emulator", "--max-tokens", "2", "--temperature", "0", "--json")
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var r textReport
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return r, errOut
	}
	t.Setenv(emu.FaultEnv, "")
	r, errOut := expand()
	if r.Backend != "metal" || r.Tokens != 2 || strings.Contains(errOut, "instead") {
		t.Errorf("on the emulator: %+v, stderr %q", r, errOut)
	}
	t.Setenv(emu.FaultEnv, "oom:0")
	r, errOut = expand()
	if r.Backend != "cpu" || r.Tokens != 2 || !strings.Contains(errOut, "writing on the CPU instead") {
		t.Errorf("with the device failing: %+v, stderr %q", r, errOut)
	}
}
