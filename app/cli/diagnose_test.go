package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"easel/app"
	"easel/app/diagnose"
	"easel/app/settings"
	"easel/engine/ml/metal"
	"easel/engine/pipeline"
	"easel/kernels/emu"
)

func runDiagnoseJSON(t *testing.T, args ...string) *diagnose.Report {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Run(append([]string{"diagnose", "--json"}, args...), &out, &errb); code != ExitOK {
		t.Fatalf("easel diagnose --json %v: exit %d: %s", args, code, errb.String())
	}
	var r diagnose.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("the report is not JSON: %v\n%s", err, out.String())
	}
	return &r
}

// TestDiagnoseReportsTheCPUPathAndWhy: off a Mac, the report says the networks run on the CPU
// and why Metal is unavailable, and names the machine without anything personal.
func TestDiagnoseReportsTheCPUPathAndWhy(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("on a Mac the report describes its GPU")
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	r := runDiagnoseJSON(t)
	if r.Metal.Available || !strings.Contains(r.Metal.Why, "Metal needs a Mac with Apple silicon") {
		t.Errorf("metal: %+v, want unavailable with the reason", r.Metal)
	}
	if !strings.Contains(r.Backend, "run on the CPU") || r.Host.OS != runtime.GOOS || r.Host.Cores < 1 || r.SelfTest != nil {
		t.Errorf("report: backend %q, host %+v, self-test %v", r.Backend, r.Host, r.SelfTest)
	}
}

// TestEmuDiagnoseEmulatorListsEveryKernel: with --emulator the report lists every kernel's
// self-test result, all passing; the second report comes from the cache, keyed by the model file's
// name (never its folder).
func TestEmuDiagnoseEmulatorListsEveryKernel(t *testing.T) {
	if _, err := emu.NewDevice(emu.Options{}); errors.Is(err, emu.ErrNoCompiler) {
		t.Skipf("Metal emulator unavailable: %v", err)
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv(emu.FaultEnv, "")
	dir := filepath.Join(t.TempDir(), "secret-folder")
	model := filepath.Join(dir, "m.cmf")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(model, []byte("not really a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runDiagnoseJSON(t, "--emulator", "--model", model)
	if r.SelfTest == nil || r.SelfTestCached || !r.Metal.Emulated {
		t.Fatalf("first report: self-test %v, cached %v, emulated %v", r.SelfTest, r.SelfTestCached, r.Metal.Emulated)
	}
	for _, want := range []string{"ops_linear", "ops_mm", "ops_rownorm", "ops_headrope", "vae_conv", "vae_chnorm", "vae_elt", "vae_upsample", "vae_transpose"} {
		found := false
		for _, k := range r.SelfTest.Results {
			if strings.Contains(k.Kernel, want) {
				found = true
				if !k.OK {
					t.Errorf("%s failed on the emulator: %s", k.Kernel, k.Error)
				}
			}
		}
		if !found {
			t.Errorf("no self-test result for %s", want)
		}
	}
	if r.SelfTest.Key.Model != "m.cmf" {
		t.Errorf("the report names the model %q, want only its file name", r.SelfTest.Key.Model)
	}
	again := runDiagnoseJSON(t, "--emulator", "--model", model)
	if !again.SelfTestCached {
		t.Error("the second report ran the self-test again instead of reading the cache")
	}
	var out, errb bytes.Buffer
	Run([]string{"diagnose", "--emulator", "--model", model}, &out, &errb)
	if strings.Contains(out.String(), "secret-folder") {
		t.Error("the text report shows the model's folder")
	}
}

// TestEmuDiagnoseShowsTheRememberedRecoveryPolicy: the command-buffer level a GPU's watchdog
// needed, persisted for the device, OS build and app version in the app-support folder, is in the
// report ("recovery policies").
func TestEmuDiagnoseShowsTheRememberedRecoveryPolicy(t *testing.T) {
	dev, err := emu.NewDevice(emu.Options{})
	if errors.Is(err, emu.ErrNoCompiler) {
		t.Skipf("Metal emulator unavailable: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv(emu.FaultEnv, "")
	if r := runDiagnoseJSON(t, "--emulator"); r.RecoveryPolicy != "" {
		t.Fatalf("a fresh app-support folder reports a recovery policy: %q", r.RecoveryPolicy)
	}
	dir, err := settings.Dir()
	if err != nil {
		t.Fatal(err)
	}
	metal.PersistedPolicy(dir, diagnose.HostBuild(), app.Version).Remember(dev.Name(), metal.ProgramDenoiser, 2)
	r := runDiagnoseJSON(t, "--emulator")
	if !strings.Contains(r.RecoveryPolicy, "one transformer block per command buffer") || !strings.Contains(r.RecoveryPolicy, "4 command buffers") {
		t.Errorf("recovery policy %q, want the remembered level in words", r.RecoveryPolicy)
	}
	var out, errb bytes.Buffer
	Run([]string{"diagnose", "--emulator"}, &out, &errb)
	if !strings.Contains(out.String(), "recovery policies: the denoiser runs one transformer block per command buffer") {
		t.Errorf("the text report has no recovery policies line:\n%s", out.String())
	}
}

// TestDiagnosePrintsTheLastJob: the last job's record (as the window's queue, `easel serve` and
// `easel generate` write it) is in the report: stage times with GPU time and peak memory, the GPU
// time per kernel class with how it was measured, the notices and declines.
func TestDiagnosePrintsTheLastJob(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir, err := settings.Dir()
	if err != nil {
		t.Fatal(err)
	}
	j := &diagnose.LastJob{Backend: "metal (M4) + cpu", Model: "tiny.cmf", Width: 64, Height: 64, Steps: 2,
		Stages:        []diagnose.Stage{{Stage: "denoising", Seconds: 2, DeviceSeconds: 1.5, PeakBytes: 3 << 30}},
		PeakFootprint: 3 << 30, PeakMemoryMethod: "VmHWM, reset at each stage's start (/proc/self/clear_refs 5)",
		Classes: map[string]float64{"gemm": 1.2, "attn": 0.3}, ClassesAre: "GPU, estimated split",
		Notices:  []string{"Metal declined the VAE: too big; the CPU runs it instead"},
		Declines: []string{"Metal declined the VAE: too big; the CPU runs it instead"},
		Recoveries: []pipeline.Recovery{{Kind: pipeline.RecoveryTimeout, Device: "Metal", Network: "the denoiser", Call: "a step", Count: 3,
			What: "the GPU's watchdog stopped a command buffer; Easel ran it again in shorter ones", Means: "the image is unaffected"}}}
	if err := diagnose.SaveLastJob(dir, j); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run("diagnose")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"model file: tiny.cmf", "denoising", "GPU 1.50 s", "peak memory 3.2 GB",
		"time per kernel class (GPU, estimated split): attn 0.30 s · gemm 1.20 s", "clear_refs", "notice: Metal declined the VAE",
		"recovery: timeout during a step (the denoiser), 3× on Metal: the GPU's watchdog stopped"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report does not say %q:\n%s", want, out)
		}
	}
	if r := runDiagnoseJSON(t); r.LastJob == nil || r.LastJob.Stages[0].PeakBytes != 3<<30 || r.LastJob.ClassesAre != "GPU, estimated split" {
		t.Errorf("--json last job: %+v", r.LastJob)
	}
}
