package backend

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"easel/engine/ml/metal"
	"easel/kernels/device"
)

// fakeVariants declares two classes whose variants take fixed times (a fake timer: no device
// runs), counting the declarations and the timings.
type fakeVariants struct {
	ms       map[string]float64
	declared int
	timed    int
	err      error // returned by declare
	cancel   func()
}

func (f *fakeVariants) declare(reg *metal.Registry, reps int) error {
	f.declared++
	if f.err != nil {
		return f.err
	}
	for _, name := range []string{"gemm/base", "gemm/swizzle", "attn/base", "attn/k64"} {
		class, variant, _ := strings.Cut(name, "/")
		ms := f.ms[name]
		if err := reg.Declare(metal.Variant{Class: class, Name: variant, Time: func(context.Context, device.Device) (time.Duration, error) {
			f.timed++
			if f.cancel != nil {
				f.cancel()
			}
			return time.Duration(ms * float64(time.Millisecond)), nil
		}}); err != nil {
			return err
		}
	}
	return nil
}

// TestTunerOnFirstUse drives the choice's tuner as the denoiser's first prefill of a run does:
// a class never tuned is tuned (the fastest per class, cached, progress told) once the self-test
// passed for the denoiser; the same class again reads the cache; another class tunes again;
// SetAutoTune(false), EASEL_METAL_AUTOTUNE=off or a self-test that declined the denoiser keep a
// new class on the baseline; a cancelled tuning caches nothing and returns the context's error;
// a tuning that cannot start is a notice and the baseline.
func TestTunerOnFirstUse(t *testing.T) {
	t.Setenv(AutoTuneEnv, "")
	for _, c := range TunedClasses {
		t.Setenv(metal.ForceEnv(c), "")
	}
	dir := t.TempDir()
	var notices, progress []string
	c := &Choice{Device: namedDevice{}, TuneDir: dir, selfTest: &metal.SelfTestReport{},
		TuneNotice: func(n string) { notices = append(notices, n) },
		TuneProgress: func(done, total int, class, variant string) {
			progress = append(progress, TuneProgressText(done, total, class, variant))
		}}
	tune := c.tuner()
	f := &fakeVariants{ms: map[string]float64{"gemm/base": 10, "gemm/swizzle": 7, "attn/base": 3, "attn/k64": 4}}

	r, err := tune(t.Context(), "rows4096 prefix256", f.declare)
	if err != nil || r == nil || r.Chosen("gemm") != "swizzle" || r.Chosen("attn") != "base" || f.timed != 4 {
		t.Fatalf("first use: %+v, %v (timed %d); want swizzle / base, 4 variants timed", r, err, f.timed)
	}
	if len(progress) != 5 || progress[0] != "Tuning for this Mac… gemm: base (1 of 4)" || progress[4] != "" {
		t.Errorf("progress lines %q", progress)
	}
	if got, g, now := c.Tuning(); got != r || g != "rows4096 prefix256" || !now {
		t.Errorf("Tuning() = %v, %q, %v", got, g, now)
	}
	if TunedVariants(dir, namedDevice{}, "rows4096 prefix256") == nil {
		t.Fatal("the choice was not cached")
	}

	if r2, err := tune(t.Context(), "rows4096 prefix256", f.declare); err != nil || r2 == nil || r2.Chosen("gemm") != "swizzle" || f.declared != 1 {
		t.Errorf("the same class again: %+v, %v, declared %d times; want the cached choice", r2, err, f.declared)
	}
	if _, _, now := c.Tuning(); now {
		t.Error("a cached choice is reported as tuned now")
	}
	if _, err := tune(t.Context(), "rows1024 prefix256", f.declare); err != nil || f.declared != 2 || len(TunedFor(dir, namedDevice{}.Name())) != 2 {
		t.Errorf("another class: %v, declared %d times, %d cached; want it tuned and cached", err, f.declared, len(TunedFor(dir, namedDevice{}.Name())))
	}

	// Off: by the setting, by the variable, or because the denoiser did not pass its self-test.
	for _, off := range []struct {
		name string
		set  func() func()
	}{
		{"SetAutoTune(false)", func() func() { c.SetAutoTune(false); return func() { c.SetAutoTune(true) } }},
		{AutoTuneEnv + "=off", func() func() { t.Setenv(AutoTuneEnv, "off"); return func() { t.Setenv(AutoTuneEnv, "") } }},
		{"the denoiser declined by the self-test", func() func() {
			st := c.selfTest
			c.selfTest = &metal.SelfTestReport{Results: []metal.KernelResult{{Kernel: "qi_mm_q4tp", Stages: []string{metal.StageDenoiser}, Error: "relative error 3"}}}
			return func() { c.selfTest = st }
		}},
	} {
		undo := off.set()
		if r, err := tune(t.Context(), "rows256 prefix256", f.declare); r != nil || err != nil || f.declared != 2 {
			t.Errorf("%s: %+v, %v, declared %d times; want the baseline, nothing tuned", off.name, r, err, f.declared)
		}
		undo()
	}

	// Cancelled while a variant is timed: the context's error, nothing cached.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f.cancel = cancel
	if r, err := tune(ctx, "rows256 prefix256", f.declare); r != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %+v, %v; want context.Canceled", r, err)
	}
	if TunedVariants(dir, namedDevice{}, "rows256 prefix256") != nil {
		t.Error("a cancelled tuning was cached")
	}
	f.cancel = nil

	// A tuning that cannot start: a notice, the baseline, the job goes on.
	f.err = errors.New("no room for a block")
	if r, err := tune(t.Context(), "rows256 prefix256", f.declare); r != nil || err != nil || len(notices) != 1 || !strings.Contains(notices[0], "the baseline kernels run") {
		t.Errorf("declare failed: %+v, %v, notices %q", r, err, notices)
	}
}
