package diagnose

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"easel/engine/ml/metal"
)

// TestReportListsTheKernelChoicePerGeometryClass: the report lists every cached kernel-variant
// choice (one per geometry class, tuned on first use of each), most recent first, with each
// variant's time; the most recent is also its Variants.
func TestReportListsTheKernelChoicePerGeometryClass(t *testing.T) {
	dir := t.TempDir()
	cache := metal.TuneCache{Dir: filepath.Join(dir, "tuning")}
	when := time.Date(2026, 12, 4, 4, 0, 0, 0, time.UTC)
	for i, g := range []string{"qi21 D3072 rows4096 prefix256", "qi21 D3072 rows1024 prefix256"} {
		r := &metal.TuneReport{Key: metal.TuneKey{Device: "Apple M4", Geometry: g}, When: when.Add(time.Duration(i) * time.Minute),
			Choices: []metal.ClassChoice{{Class: "gemm", Variant: "swizzle", Results: []metal.VariantResult{{Name: "base", MS: 12.5}, {Name: "swizzle", MS: 9.25}}}}}
		if err := cache.Save(r); err != nil {
			t.Fatal(err)
		}
	}
	r := Build(Options{Dir: dir})
	if len(r.Tunings) != 2 || r.Variants != r.Tunings[0] || r.Variants.Key.Geometry != "qi21 D3072 rows1024 prefix256" {
		t.Fatalf("tunings %v, variants %v", r.Tunings, r.Variants)
	}
	text := r.Text()
	for _, want := range []string{"(qi21 D3072 rows4096 prefix256)", "(qi21 D3072 rows1024 prefix256)", "gemm: swizzle (fastest); base 12.500 ms; swizzle 9.250 ms"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report does not say %q:\n%s", want, text)
		}
	}
	if !strings.Contains(string(r.JSON()), `"kernel_variants_by_geometry"`) {
		t.Error("the JSON report has no kernel_variants_by_geometry")
	}
}

// TestReportSaysWhetherSleepNoticesAreHeard: the report says whether this process hears the
// Mac's sleep notices (off macOS: that there are none here), in the text and the JSON.
func TestReportSaysWhetherSleepNoticesAreHeard(t *testing.T) {
	r := Build(Options{Backend: "cpu"})
	want := "heard"
	if runtime.GOOS != "darwin" {
		want = "not on this system (macOS only)"
	}
	if r.SleepNotices != want || !strings.Contains(r.Text(), "sleep notices: "+want) {
		t.Errorf("sleep notices %q, text %q; want %q", r.SleepNotices, r.Text(), want)
	}
	if !strings.Contains(string(r.JSON()), `"sleep_notices"`) {
		t.Error("the JSON has no sleep_notices")
	}
}
