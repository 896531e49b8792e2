package qi21metal

import (
	"strings"
	"testing"

	"easel/engine/convert"
	"easel/engine/ml/metal"
	"easel/internal/testdevice"
	"easel/kernels/emu"
)

// TestEmuDenoiserSelfTest: the denoiser's check passes on the emulator within the bound, fails
// under the corrupt-gemm fault (declining the denoiser with a sentence naming its kernels), and
// under the overflow fault passes with the widened guards it reports.
func TestEmuDenoiserSelfTest(t *testing.T) {
	m, f := tinyModel(t, convert.ProfileCortiq)
	for _, fault := range []emu.Fault{{}, {Kind: emu.CorruptGEMM}, {Kind: emu.Overflow}} {
		dev := testdevice.Device(t, emu.Options{Fault: &fault})
		k := metal.Knobs{Guards: metal.DefaultGuards}
		var g metal.Guards
		r, err := metal.RunSelfTest(t.Context(), dev, metal.SelfTestKey{}, SelfTestChecks(m, f.Bytes(), &k, &g), nil)
		if err != nil {
			t.Fatal(err)
		}
		res := r.Results[0]
		rel := -1.0
		if res.RelErr != nil {
			rel = *res.RelErr
		}
		t.Logf("fault %v: ok %v, relative error %.3g, guards %v: %s", fault, res.OK, rel, g, res.Error)
		decline := r.Decline(metal.StageDenoiser)
		switch fault.Kind {
		case emu.CorruptGEMM:
			if res.OK || decline == nil || !strings.Contains(decline.Error(), "qi_mm_q4tp") {
				t.Errorf("corrupt-gemm: ok %v, decline %v", res.OK, decline)
			}
		case emu.Overflow:
			if !res.OK || g == metal.DefaultGuards {
				t.Errorf("overflow: ok %v, guards %v (want widened)", res.OK, g)
			}
		default:
			if !res.OK || decline != nil {
				t.Errorf("no fault: ok %v, %s", res.OK, res.Error)
			}
		}
	}
}
