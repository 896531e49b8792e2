package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"easel/app"
	"easel/app/diagnose"
	"easel/app/jobs"
	"easel/app/settings"
	"easel/engine/ml/metal"
	"easel/engine/pipeline"
)

// firstUseGen is the scripted generator of a first Metal job: before its stages it reports the
// GPU self-test's and the tuning's progress lines to the job (as jobs.ModelGenerator does), and
// it knows the variant choice its denoiser ran with.
type firstUseGen struct {
	*scriptedGen
	report *metal.TuneReport
	lines  []string
	tuneOn *bool // what the Settings dialog last set
	// onCPU makes the next runs' denoiser run on the CPU (no device time in the result).
	onCPU bool
}

func (g *firstUseGen) SetAutoTune(on bool) { g.tuneOn = &on }

func (g *firstUseGen) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	for _, l := range g.lines {
		jobs.ReportStatus(ctx, jobs.Status{Line: l})
	}
	jobs.ReportStatus(ctx, jobs.Status{Notice: "the kernel choice for this Mac is not remembered (a test); it is tuned again next time"})
	res, err := g.scriptedGen.Run(ctx, req, events)
	if res != nil && !g.onCPU {
		res.StageDeviceTimes[pipeline.StageDenoising] = 3 * time.Second // the denoiser ran on Metal
	}
	return res, err
}

func (g *firstUseGen) Tuning() (*metal.TuneReport, string) { return g.report, g.report.Key.Geometry }
func (g *firstUseGen) MetalDevice() string                 { return g.report.Key.Device }

// TestFirstMetalUseInTheWindow: the first Metal job's self-test and tuning lines take the progress
// line while they run and the tuning's notice shows under the controls; when the job is done the
// timing panel captions the gemm and attn rows with the variants the denoiser ran; the Settings
// dialog has a read-only GPU section with the cached self-test result and the variants chosen per
// geometry class (read from the app-support folder's caches), and turning its GPU tuning off
// reaches the generator.
func TestFirstMetalUseInTheWindow(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("HOME", cfg) // os.UserConfigDir on macOS
	for _, c := range []string{"gemm", "attn"} {
		t.Setenv(metal.ForceEnv(c), "")
	}
	dir, err := settings.Dir()
	if err != nil {
		t.Fatal(err)
	}
	const dev = "Apple M4 (test)"
	when := time.Date(2026, 12, 4, 3, 40, 0, 0, time.UTC)
	report := &metal.TuneReport{Key: metal.TuneKey{Device: dev, Geometry: "qi21 D256 H2 F768 q4tp rows16 prefix16"}, When: when,
		Choices: []metal.ClassChoice{{Class: "gemm", Variant: "swizzle"}, {Class: "attn", Variant: "base"}}}
	report.Key.OSBuild, report.Key.AppVersion = backendKey()
	report.Key.Build = metal.BuildID()
	if err := (metal.TuneCache{Dir: filepath.Join(dir, "tuning")}).Save(report); err != nil {
		t.Fatal(err)
	}
	st := &metal.SelfTestReport{Key: metal.SelfTestKey{Device: dev, Model: "tiny.cmf"}, When: when,
		Results: []metal.KernelResult{{Kernel: "qi_mm_q4tp", Stages: []string{metal.StageDenoiser}, OK: true}, {Kernel: "vae_conv", Stages: []string{metal.StageVAE}, OK: false, Error: "relative error 6.4e+05"}}}
	if err := (metal.SelfTestCache{Dir: filepath.Join(dir, "selftest")}).Save(st); err != nil {
		t.Fatal(err)
	}

	gen := &firstUseGen{scriptedGen: newScriptedGen(), report: report,
		lines: []string{"Checking the GPU (first use on this Mac)… 1 of 2: qi_mm_q4tp", "Tuning for this Mac… gemm: swizzle (3 of 8)"}}
	h := newHarnessWith(t, 16e9, func(h *harness, d *Deps) {
		d.Generator = gen
		d.Store = &settings.Store{Path: filepath.Join(h.dir, "settings.json")}
	})
	test.Tap(h.s.generateBtn)
	<-gen.started
	h.pump("the self-test's progress line", func() bool { return strings.Contains(h.s.progress.Stage.Text, "Checking the GPU") })
	h.pump("the tuning's progress line", func() bool {
		return strings.Contains(h.s.progress.Stage.Text, "Tuning for this Mac… gemm: swizzle (3 of 8)")
	})
	h.pump("the tuning's notice", func() bool { return strings.Contains(h.s.message.Text, "not remembered") })
	for range fakeSteps {
		gen.step <- struct{}{}
	}
	gen.release <- struct{}{}
	h.pump("the job done", func() bool { return strings.Contains(h.s.progress.Stage.Text, "done") })
	if g, a := h.s.timing.Names[0].Text, h.s.timing.Names[1].Text; g != "gemm: swizzle" || a != "attn: base" {
		t.Errorf("the timing panel's rows say %q and %q, want gemm: swizzle and attn: base", g, a)
	}
	for _, n := range h.s.timing.Names[2:] {
		if strings.Contains(n.Text, ":") {
			t.Errorf("an untuned class row is captioned %q", n.Text)
		}
	}

	h.s.showSettings()
	form := h.w.Canvas().Overlays().Top()
	if form == nil {
		t.Fatal("no Settings dialog")
	}
	var gpu string
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch v := o.(type) {
		case *widget.Label:
			if strings.HasPrefix(v.Text, "GPU self-test") {
				gpu = v.Text
			}
		case *fyne.Container:
			for _, c := range v.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(v).Objects() {
				walk(c)
			}
		}
	}
	walk(form)
	t.Logf("the Settings dialog's GPU section:\n%s", gpu)
	for _, want := range []string{"GPU self-test on " + dev, "vae_conv (relative error 6.4e+05)", "The CPU runs the VAE instead",
		"Kernel variants chosen for this Mac", "qi21 D256 H2 F768 q4tp rows16 prefix16 — gemm: swizzle · attn: base"} {
		if !strings.Contains(gpu, want) {
			t.Errorf("the Settings dialog's GPU section does not say %q", want)
		}
	}

	// Turning GPU tuning off in Settings reaches the generator from the next job on.
	ns := h.s.deps.Settings
	ns.NoGPUTuning = true
	h.s.settingsSaved(ns)
	if gen.tuneOn == nil || *gen.tuneOn {
		t.Errorf("saving GPU tuning off told the generator %v", gen.tuneOn)
	}
}

// backendKey is the OS build and app version this process keys its caches with.
func backendKey() (osBuild, appVersion string) {
	return diagnose.HostBuild(), app.Version
}

// TestVariantCaptionsOnlyForJobsOnThisGPU: the timing panel's rows name the kernel variants after
// a job whose denoiser ran on this Mac's GPU, and only the classes after one that ran on the CPU
// (or on another Mac, whose result carries no device time).
func TestVariantCaptionsOnlyForJobsOnThisGPU(t *testing.T) {
	report := &metal.TuneReport{Key: metal.TuneKey{Device: "Apple M4 (test)", Geometry: "qi21 D256 H2 F768 q4tp rows16 prefix16"},
		Choices: []metal.ClassChoice{{Class: "gemm", Variant: "swizzle"}, {Class: "attn", Variant: "base"}}}
	gen := &firstUseGen{scriptedGen: newScriptedGen(), report: report}
	h := newHarnessWith(t, 16e9, func(h *harness, d *Deps) { d.Generator = gen })
	job := func(n int) {
		test.Tap(h.s.generateBtn)
		<-gen.started
		for range fakeSteps {
			gen.step <- struct{}{}
		}
		gen.release <- struct{}{}
		h.pump("the job done", func() bool { return strings.Contains(h.s.progress.Stage.Text, fmt.Sprintf("Job %d: done", n)) })
	}
	job(1)
	if g := h.s.timing.Names[0].Text; g != "gemm: swizzle" {
		t.Errorf("after a job on the GPU the gemm row says %q, want gemm: swizzle", g)
	}
	gen.onCPU = true
	job(2)
	if g, a := h.s.timing.Names[0].Text, h.s.timing.Names[1].Text; g != "gemm" || a != "attn" {
		t.Errorf("after a job on the CPU the rows say %q and %q, want gemm and attn", g, a)
	}
}
