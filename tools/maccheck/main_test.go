package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// testJSON is a `go test -json` stream: one pass, one failure with its output, one skip, a subtest.
const testJSON = `{"Action":"run","Package":"easel/kernels","Test":"TestEmuQuantizedGEMM"}
{"Action":"output","Package":"easel/kernels","Test":"TestEmuQuantizedGEMM/q4tp","Output":"sub\n"}
{"Action":"pass","Package":"easel/kernels","Test":"TestEmuQuantizedGEMM/q4tp"}
{"Action":"pass","Package":"easel/kernels","Test":"TestEmuQuantizedGEMM"}
{"Action":"output","Package":"easel/kernels","Test":"TestEmuFlashAttention","Output":"    flash_test.go:99: relative error 3.1e-02 > 1e-02\n"}
{"Action":"fail","Package":"easel/kernels","Test":"TestEmuFlashAttention"}
{"Action":"output","Package":"easel/engine/ml/metalops","Test":"TestEmuNetworkRecoversFromGPUErrors","Output":"    emutest.go:51: EASEL_TEST_DEVICE=system: this test needs the emulator's fault injection\n"}
{"Action":"skip","Package":"easel/engine/ml/metalops","Test":"TestEmuNetworkRecoversFromGPUErrors"}
{"Action":"fail","Package":"easel/kernels"}
{"Action":"pass","Package":"easel/engine/ml/metalops"}
`

const benchJSON = `{"device":"Apple M4 Pro","emulated":false,"timing":"GPU","geometry":"qi21","blocks":[{"median_wall_ms":125.0,"median_device_ms":120.5}]}`

const swVers = "ProductName:\t\tmacOS\nProductVersion:\t\t15.2\nBuildVersion:\t\t24C101\n"

const displays = `{"SPDisplaysDataType":[{"_name":"Apple M4 Pro","sppci_model":"Apple M4 Pro","spdisplays_mtlgpufamilysupport":"spdisplays_metal3"}]}`

// fakeRun answers the steps as a Mac would, recording what was run (the machine's questions
// apart).
func fakeRun(t *testing.T, calls *[]string, benchOut string, benchErr error) runner {
	return func(env []string, name string, args ...string) ([]byte, []byte, error) {
		switch name {
		case "sw_vers":
			return []byte(swVers), nil, nil
		case "system_profiler":
			return []byte(displays), nil, nil
		case "uname":
			return []byte("Linux 6.1.0 x86_64\n"), nil, nil
		}
		*calls = append(*calls, strings.TrimSpace(strings.Join(env, " ")+" "+name+" "+strings.Join(args, " ")))
		switch {
		case name == "go":
			return []byte(testJSON), nil, errors.New("exit status 1")
		case len(args) > 0 && args[0] == "diagnose":
			return []byte(`{"app":"Easel","host":{"chip":"Apple M4 Pro"},"metal":{"available":true,"gpu_family":"apple9"}}`), nil, nil
		case len(args) > 0 && args[0] == "bench":
			return []byte(benchOut), []byte("bench failed\n"), benchErr
		}
		t.Fatalf("unexpected command %s %v", name, args)
		return nil, nil, nil
	}
}

// onMac are the options of make mac-check on a Mac.
var onMac = options{Easel: "./easel", TestDevice: "system", GOOS: "darwin"}

func TestCheckRunsTheThreeStepsAndReportsTheirFigures(t *testing.T) {
	var calls []string
	r := check(fakeRun(t, &calls, benchJSON, nil), onMac, time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC))
	if len(calls) != 3 || !strings.HasPrefix(calls[0], "EASEL_TEST_DEVICE=system go test -p 1 -count=1") ||
		calls[1] != "./easel diagnose --json --rerun" || calls[2] != "./easel bench dit-metal --rows 4096 --prefix 256 --reps 3 --json" {
		t.Fatalf("ran:\n%s", strings.Join(calls, "\n"))
	}
	if r.Parity.Passed != 1 || r.Parity.Failed != 1 || r.Parity.Skipped != 1 {
		t.Fatalf("parity counts %+v", r.Parity)
	}
	if r.SecondsPerSt != 4.0 { // 32 × 125 ms
		t.Fatalf("s/step %v, want 4.00 (32 blocks × 125 ms)", r.SecondsPerSt)
	}
	if r.OK() {
		t.Fatal("a failed parity test left the check OK")
	}
	md := r.Markdown()
	for _, want := range []string{
		"1 passed, 1 failed, 1 skipped", "**4.00 s/step**", "Apple M4 Pro", "FAIL easel/kernels TestEmuFlashAttention",
		"relative error 3.1e-02", "1× EASEL_TEST_DEVICE=system: this test needs the emulator's fault injection", `"chip":"Apple M4 Pro"`,
		"macOS 15.2 (build 24C101)", "GPU Apple M4 Pro", "GPU family apple9", "Metal 3 support",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
}

func TestCheckSaysWhyTheStepTimingIsMissing(t *testing.T) {
	var calls []string
	r := check(fakeRun(t, &calls, "", errors.New("exit status 1")), onMac, time.Now())
	if r.BenchErr == "" || r.SecondsPerSt != 0 || !strings.Contains(r.Markdown(), "bench failed") {
		t.Fatalf("a failed bench: err %q, s/step %v", r.BenchErr, r.SecondsPerSt)
	}
	r = check(fakeRun(t, &calls, `{"emulated":true,"blocks":[{"median_wall_ms":9}]}`, nil), onMac, time.Now())
	if !strings.Contains(r.BenchErr, "emulator") || r.SecondsPerSt != 0 {
		t.Fatalf("an emulated bench was taken for a GPU figure: %q %v", r.BenchErr, r.SecondsPerSt)
	}
}

// TestOffAMacOnlyTheTestStepRuns: forced off a Mac with the opaque device, the test step runs
// with the emulator required, and the GPU steps say why they did not run without failing the
// check.
func TestOffAMacOnlyTheTestStepRuns(t *testing.T) {
	var calls []string
	run := func(env []string, name string, args ...string) ([]byte, []byte, error) {
		if name == "uname" {
			return []byte("Linux 6.1.0 x86_64\n"), nil, nil
		}
		calls = append(calls, strings.TrimSpace(strings.Join(env, " ")+" "+name+" "+strings.Join(args, " ")))
		return []byte(`{"Action":"pass","Package":"easel/kernels","Test":"TestEmuRowOp"}
{"Action":"pass","Package":"easel/kernels"}
`), nil, nil
	}
	r := check(run, options{Easel: "./easel", TestDevice: "opaque", GOOS: "linux"}, time.Now())
	if len(calls) != 1 || !strings.HasPrefix(calls[0], "EASEL_TEST_DEVICE=opaque EASEL_REQUIRE_EMULATOR=1 go test -p 1 ") {
		t.Fatalf("ran:\n%s", strings.Join(calls, "\n"))
	}
	md := r.Markdown()
	if !r.OK() || !strings.Contains(md, "Test step passed") || !strings.Contains(md, "not run: this is linux") || !strings.Contains(md, "Linux 6.1.0 x86_64") {
		t.Fatalf("OK %v:\n%s", r.OK(), md)
	}
}

// makeDryRun is `make -n TARGET VARS...` in the repository root.
func makeDryRun(t *testing.T, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	cmd := exec.Command("make", append([]string{"-n", "-C", filepath.Join("..", "..")}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestMakefileMacCheckAndTestOnAMac: the recipes of make mac-check and make unit are valid shell
// (bash -n), mac-check runs this command on the built binary, and make test requires the
// emulator, in mixed mode, only on Linux.
func TestMakefileMacCheckAndTestOnAMac(t *testing.T) {
	mac := makeDryRun(t, "mac-check", "UNAME_S=Darwin")
	if !strings.Contains(mac, "go run ./tools/maccheck -easel ./easel -out mac-check-report.md") {
		t.Fatalf("make mac-check does not run tools/maccheck on the built binary:\n%s", mac)
	}
	onMac := makeDryRun(t, "unit", "UNAME_S=Darwin")
	onLinux := makeDryRun(t, "unit", "UNAME_S=Linux")
	if strings.Contains(onMac, "EASEL_REQUIRE_EMULATOR") || !strings.Contains(onLinux, "EASEL_REQUIRE_EMULATOR=1") {
		t.Fatalf("the emulator must be required on Linux only:\nDarwin: %s\nLinux: %s", onMac, onLinux)
	}
	if !strings.Contains(onLinux, "EASEL_TEST_DEVICE=mixed") || strings.Contains(onMac, "EASEL_TEST_DEVICE") {
		t.Fatalf("make unit on Linux must see the device as a Mac's GPU where a test allows it (EASEL_TEST_DEVICE=mixed):\nDarwin: %s\nLinux: %s", onMac, onLinux)
	}
	for name, script := range map[string]string{"mac-check": mac, "unit (Darwin)": onMac, "unit (Linux)": onLinux} {
		cmd := exec.Command("bash", "-n")
		cmd.Stdin = strings.NewReader(script)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("make %s's recipe is not valid shell: %v\n%s\n%s", name, err, out, script)
		}
	}
	for _, f := range []string{"tools/deps.sh", "packaging/package.sh"} {
		if out, err := exec.Command("bash", "-n", filepath.Join("..", "..", f)).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", f, err, out)
		}
	}
}

func TestRefusesOffAMac(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("on a Mac it runs")
	}
	cmd := exec.Command("go", "run", ".", "-out", filepath.Join(t.TempDir(), "r.md"))
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "run it on a Mac") {
		t.Fatalf("maccheck off a Mac: %v\n%s", err, out)
	}
}
