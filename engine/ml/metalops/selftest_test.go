package metalops

import (
	"errors"
	"strings"
	"testing"

	"easel/engine/ml/metal"
	"easel/internal/testdevice"
	"easel/kernels/emu"
)

// TestEmuSelfTestPassesAndIsCached: every kernel of the slice passes on the emulator, the report
// is cached under its key and read back, and a second LoadOrRun does not run the checks again.
func TestEmuSelfTestPassesAndIsCached(t *testing.T) {
	dev := testdevice.Device(t, emu.Options{Fault: &emu.Fault{}})
	checks, done := SelfTestChecks()
	defer done()
	cache := metal.SelfTestCache{Dir: t.TempDir()}
	key := metal.SelfTestKey{Device: dev.Name(), OSBuild: "test", AppVersion: "test", Model: "none"}
	var progress []string
	r, cached, err := cache.LoadOrRun(t.Context(), dev, key, checks, func(done, total int, k string) {
		progress = append(progress, k)
	})
	if err != nil || cached {
		t.Fatalf("LoadOrRun: cached %v, %v", cached, err)
	}
	for _, k := range r.Results {
		t.Logf("%-45s ok %v rel %.2e (bound %.0e) %s", k.Kernel, k.OK, deref(k.RelErr), k.Bound, k.Error)
	}
	if !r.Passed() || len(r.Results) != len(checks) || len(progress) != len(checks)+1 {
		t.Fatalf("self-test on the emulator: passed %v, %d results, %d progress calls", r.Passed(), len(r.Results), len(progress))
	}
	again, cached, err := cache.LoadOrRun(t.Context(), dev, key, nil, nil)
	if err != nil || !cached || len(again.Results) != len(r.Results) {
		t.Fatalf("second LoadOrRun: cached %v, %d results, %v", cached, len(again.Results), err)
	}
	other := key
	other.ModelSize = 1
	if cache.Load(other) != nil {
		t.Error("a report was found for another model file")
	}
}

// TestEmuSelfTestCatchesACorruptGEMM: with the emulator's corrupt-gemm fault every GEMM-like
// kernel fails its check, the others pass, and both stages decline with a sentence naming them.
func TestEmuSelfTestCatchesACorruptGEMM(t *testing.T) {
	dev := testdevice.Device(t, emu.Options{Fault: &emu.Fault{Kind: emu.CorruptGEMM}})
	checks, done := SelfTestChecks()
	defer done()
	r, err := metal.RunSelfTest(t.Context(), dev, metal.SelfTestKey{}, checks, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range r.Results {
		gemm := strings.Contains(k.Kernel, "ops_linear") || strings.Contains(k.Kernel, "ops_mm") || strings.Contains(k.Kernel, "vae_conv")
		t.Logf("%-45s ok %v rel %.2e %s", k.Kernel, k.OK, deref(k.RelErr), k.Error)
		if k.OK == gemm {
			t.Errorf("%s: ok %v under corrupt-gemm", k.Kernel, k.OK)
		}
	}
	for _, stage := range []string{metal.StageTextEncoder, metal.StageVAE} {
		err := r.Decline(stage)
		var d *metal.Declined
		if !errors.As(err, &d) || !strings.Contains(err.Error(), "ops_linear") {
			t.Errorf("%s: decline %v, want a *Declined naming ops_linear", stage, err)
		}
	}
	if r.Decline(metal.StageDenoiser) != nil {
		t.Error("the denoiser declined on the text encoder's and VAE's checks")
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}
