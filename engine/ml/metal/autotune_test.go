package metal

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"easel/kernels/device"
	"easel/kernels/emu"
)

// fakeTimer gives each variant a fixed time and counts the timings, so the autotuner's choice
// logic can be tested without a device.
type fakeTimer struct {
	ms    map[string]float64
	calls map[string]int
}

func (f *fakeTimer) variant(class, name string, opts ...func(*Variant)) Variant {
	v := Variant{Class: class, Name: name, Time: func(context.Context, device.Device) (time.Duration, error) {
		f.calls[class+"/"+name]++
		return time.Duration(f.ms[class+"/"+name] * float64(time.Millisecond)), nil
	}}
	for _, o := range opts {
		o(&v)
	}
	return v
}

func failsCheck(v *Variant) {
	v.Check = func(context.Context, device.Device) error { return errors.New("differs from the baseline") }
}
func doesNotFit(v *Variant) {
	v.Prepare = func(device.Device) error { return errors.New("needs 256 threads; the pipeline allows 192") }
}
func needsTensor(v *Variant) { v.TensorOps = true }

// tensorDevice is a device stand-in that answers SupportsTensorOps; nothing else is called.
type tensorDevice struct {
	device.Device
	tensor bool
}

func (d tensorDevice) SupportsTensorOps() bool { return d.tensor }

func newFakeRegistry(t *testing.T, f *fakeTimer) *Registry {
	t.Helper()
	reg := &Registry{}
	for _, v := range []Variant{
		f.variant("gemm", "base"),
		f.variant("gemm", "staged"),
		f.variant("gemm", "wide", doesNotFit),
		f.variant("gemm", "broken", failsCheck),
		f.variant("gemm", "tensor", needsTensor),
		f.variant("attn", "base"),
		f.variant("attn", "k64"),
	} {
		if err := reg.Declare(v); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

func TestTunePicksTheFastestThatPassed(t *testing.T) {
	f := &fakeTimer{calls: map[string]int{}, ms: map[string]float64{
		"gemm/base": 10, "gemm/staged": 8, "gemm/wide": 1, "gemm/broken": 0.5, "gemm/tensor": 2,
		"attn/base": 3, "attn/k64": 4,
	}}
	reg := newFakeRegistry(t, f)
	key := TuneKey{Device: "Apple M4", OSBuild: "25A354", AppVersion: "1.0", Geometry: "rows4096"}
	r, err := Tune(context.Background(), tensorDevice{}, key, reg, func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	// wide is fastest but does not fit, broken fails its check, tensor needs the tensor API.
	if got := r.Chosen("gemm"); got != "staged" {
		t.Errorf("gemm: chose %s, want staged (the fastest that passed)\n%s", got, r.Summary())
	}
	if got := r.Chosen("attn"); got != "base" {
		t.Errorf("attn: chose %s, want base (faster than k64)", got)
	}
	for _, name := range []string{"wide", "broken", "tensor"} {
		if f.calls["gemm/"+name] != 0 {
			t.Errorf("gemm/%s was timed though it should have been skipped", name)
		}
	}
	s := r.Summary()
	for _, want := range []string{"does not fit", "failed its check", "no Metal 4 tensor operations", "staged 8.000 ms"} {
		if !strings.Contains(s, want) {
			t.Errorf("the summary lacks %q:\n%s", want, s)
		}
	}

	// With the tensor API the tensor variant is timed and, being the fastest that passed, chosen.
	r, err = Tune(context.Background(), tensorDevice{tensor: true}, key, reg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Chosen("gemm"); got != "tensor" {
		t.Errorf("gemm on a tensor-ops device: chose %s, want tensor\n%s", got, r.Summary())
	}
}

func TestTuneCachesAndRetunesWhenTheKeyChanges(t *testing.T) {
	f := &fakeTimer{calls: map[string]int{}, ms: map[string]float64{"gemm/base": 10, "gemm/staged": 8, "attn/base": 3, "attn/k64": 2}}
	reg := newFakeRegistry(t, f)
	cache := TuneCache{Dir: t.TempDir()}
	key := TuneKey{Device: "Apple M1", OSBuild: "24G84", AppVersion: "1.0", Geometry: "rows1024"}
	var progress []string
	r, cached, err := cache.LoadOrTune(context.Background(), tensorDevice{}, key, reg, nil, func(done, total int, class, v string) {
		progress = append(progress, class+"/"+v)
	})
	if err != nil || cached {
		t.Fatalf("first run: cached %v, err %v", cached, err)
	}
	if r.Chosen("gemm") != "staged" || r.Chosen("attn") != "k64" {
		t.Fatalf("chose %s / %s\n%s", r.Chosen("gemm"), r.Chosen("attn"), r.Summary())
	}
	if len(progress) != 8 { // 7 variants, then the end
		t.Errorf("progress told %v", progress)
	}
	// Same key: from the cache, nothing timed again.
	f.ms["gemm/base"] = 1
	r2, cached, err := cache.LoadOrTune(context.Background(), tensorDevice{}, key, reg, nil, nil)
	if err != nil || !cached || r2.Chosen("gemm") != "staged" || f.calls["gemm/base"] != 1 {
		t.Fatalf("second run: cached %v, err %v, chose %s, base timed %d times", cached, err, r2.Chosen("gemm"), f.calls["gemm/base"])
	}
	if latest := cache.Latest(); latest == nil || latest.Key != key {
		t.Errorf("Latest = %+v", latest)
	}
	// Another OS build (or device, app version, geometry): tuned again, and base now wins.
	for _, k := range []TuneKey{
		{Device: "Apple M1", OSBuild: "25A354", AppVersion: "1.0", Geometry: "rows1024"},
		{Device: "Apple M1", OSBuild: "24G84", AppVersion: "1.1", Geometry: "rows1024"},
		{Device: "Apple M1", OSBuild: "24G84", AppVersion: "1.0", Geometry: "rows4096"},
		{Device: "Apple M2", OSBuild: "24G84", AppVersion: "1.0", Geometry: "rows1024"},
	} {
		before := f.calls["gemm/base"]
		r3, cached, err := cache.LoadOrTune(context.Background(), tensorDevice{}, k, reg, nil, nil)
		if err != nil || cached || f.calls["gemm/base"] != before+1 || r3.Chosen("gemm") != "base" {
			t.Fatalf("key %+v: cached %v, err %v, chose %s", k, cached, err, r3.Chosen("gemm"))
		}
	}
}

func TestTuneForcedVariant(t *testing.T) {
	f := &fakeTimer{calls: map[string]int{}, ms: map[string]float64{"gemm/base": 10, "gemm/staged": 8, "attn/base": 3, "attn/k64": 4}}
	reg := newFakeRegistry(t, f)
	env := map[string]string{"EASEL_METAL_VARIANT_ATTN": "k64", "EASEL_METAL_VARIANT_GEMM": "broken"}
	r, err := Tune(context.Background(), tensorDevice{}, TuneKey{Device: "x"}, reg, func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Choices[1]
	if c.Class != "attn" || c.Variant != "k64" || !c.Forced || f.calls["attn/base"] != 0 || f.calls["attn/k64"] != 0 {
		t.Errorf("forced attn: %+v, timings %v", c, f.calls)
	}
	// A forced variant that fails its check is not used: the baseline is, with a note.
	if g := r.Choices[0]; g.Variant != "base" || g.Forced || !strings.Contains(g.Note, "did not pass") {
		t.Errorf("forced broken gemm: %+v", g)
	}
	// An unknown name is reported and the class tuned normally.
	env = map[string]string{"EASEL_METAL_VARIANT_GEMM": "nosuch"}
	r, _ = Tune(context.Background(), tensorDevice{}, TuneKey{Device: "x"}, reg, func(k string) string { return env[k] }, nil)
	if g := r.Choices[0]; g.Variant != "staged" || !strings.Contains(g.Note, "names no variant") {
		t.Errorf("unknown forced name: %+v", g)
	}
	// A cached choice follows a forcing variable set later, for a variant the cached run timed.
	cache := TuneCache{Dir: t.TempDir()}
	key := TuneKey{Device: "y"}
	if _, _, err := cache.LoadOrTune(context.Background(), tensorDevice{}, key, reg, nil, nil); err != nil {
		t.Fatal(err)
	}
	env = map[string]string{"EASEL_METAL_VARIANT_GEMM": "base"}
	r, cached, _ := cache.LoadOrTune(context.Background(), tensorDevice{}, key, reg, func(k string) string { return env[k] }, nil)
	if !cached || r.Chosen("gemm") != "base" || !r.Choices[0].Forced {
		t.Errorf("cached + forced: cached %v, %+v", cached, r.Choices[0])
	}
	if ForceEnv("gemm") != "EASEL_METAL_VARIANT_GEMM" {
		t.Error(ForceEnv("gemm"))
	}
}

func TestRegistryRejectsDuplicates(t *testing.T) {
	reg := &Registry{}
	if err := reg.Declare(Variant{Class: "gemm", Name: "base"}); err != nil {
		t.Fatal(err)
	}
	if err := reg.Declare(Variant{Class: "gemm", Name: "base"}); err == nil {
		t.Error("a duplicate variant was accepted")
	}
	if err := reg.Declare(Variant{Name: "x"}); err == nil {
		t.Error("a variant without a class was accepted")
	}
}

func TestHasTensorOps(t *testing.T) {
	if HasTensorOps(tensorDevice{}) || !HasTensorOps(tensorDevice{tensor: true}) {
		t.Error("HasTensorOps does not follow SupportsTensorOps")
	}
	// emu.NewDevice, not testdevice.Device: testdevice imports this package (its system device).
	dev, err := emu.NewDevice(emu.Options{})
	if errors.Is(err, emu.ErrNoCompiler) && os.Getenv(emu.RequiredEnv) != "1" {
		t.Skipf("Metal emulator unavailable: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !HasTensorOps(dev) {
		t.Error("the emulator runs the tensor-op subset but does not say so")
	}
}

// TestTuneCancelledCachesNothing: a context cancelled while any variant runs — the last one
// included, whose time would otherwise be half measured — stops the tuning with the context's
// error, and LoadOrTune caches nothing.
func TestTuneCancelledCachesNothing(t *testing.T) {
	for _, at := range []string{"gemm/staged", "attn/k64"} {
		f := &fakeTimer{calls: map[string]int{}, ms: map[string]float64{"gemm/base": 10, "gemm/staged": 8, "attn/base": 3, "attn/k64": 4}}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		reg := &Registry{}
		for _, name := range []string{"gemm/base", "gemm/staged", "attn/base", "attn/k64"} {
			class, variant, _ := strings.Cut(name, "/")
			v := f.variant(class, variant)
			if name == at {
				timed := v.Time
				v.Time = func(c context.Context, d device.Device) (time.Duration, error) {
					cancel() // the job is cancelled while this variant is timed
					return timed(c, d)
				}
			}
			if err := reg.Declare(v); err != nil {
				t.Fatal(err)
			}
		}
		cache := TuneCache{Dir: t.TempDir()}
		key := TuneKey{Device: "Apple M4", OSBuild: "25A354", AppVersion: "1.0", Geometry: "rows4096"}
		r, _, err := cache.LoadOrTune(ctx, tensorDevice{}, key, reg, nil, nil)
		if !errors.Is(err, context.Canceled) || r != nil {
			t.Errorf("cancelled at %s: report %v, err %v; want none and context.Canceled", at, r, err)
		}
		if cache.Load(key) != nil || len(cache.All()) != 0 {
			t.Errorf("cancelled at %s: a choice was cached", at)
		}
	}
}
