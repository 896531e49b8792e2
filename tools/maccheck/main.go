// Command maccheck is `make mac-check`: the first run of Easel's Metal path on a Mac's own GPU,
// written as one report to paste into an issue. It runs, in order:
//
//  0. what the machine is: macOS version and build (sw_vers), the GPU and its Metal support
//     (system_profiler), its GPU family (from step 2), the Go toolchain;
//  1. the emulator's parity tests against the real device (EASEL_TEST_DEVICE=system: the same
//     tests `make test` runs on the Metal emulator, each kernel and network against the CPU;
//     tests that need the emulator's fault injection or buffer counts skip themselves, saying
//     so), one package at a time (-p 1: no two test binaries share the GPU). The report quotes
//     verbatim every compiler error (go test -json's build-output events), every failed test's
//     output and every panic (a panic ends the package's test binary: its later tests do not
//     run);
//  2. the first-use self-test, fresh (`easel diagnose --json --rerun`), with the machine, the GPU
//     and the cached tuning in the same JSON;
//  3. one full-size denoiser block at 1024² (4096 target rows, 256 prefix rows, the published
//     geometry with random q4tp weights: `easel bench dit-metal --rows 4096 --prefix 256 --reps 3
//     --json`), from which one step's seconds are 32 blocks × the block's median wall time (one
//     program: CFG 1).
//
// Every step runs even when one before failed; the report says which failed and how. The exit
// status is 1 when any step failed. Nothing here is measured off a Mac: the command refuses to
// run elsewhere unless -force is given, and then runs the test step only (steps 2 and 3 need the
// GPU). With -test-device opaque (and -force) that test step runs on the emulator seen only as a
// GPU is (EASEL_TEST_DEVICE=opaque, internal/testdevice), which is how this command and the
// tests' Mac behaviour are checked on Linux.
//
// Usage: maccheck [-easel ./easel] [-out mac-check-report.md] [-test-device system|opaque] [-force]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// parityPackages are the packages whose emulator tests compare the Metal path with the CPU.
var parityPackages = []string{
	"./kernels/",
	"./engine/ml/metalops/",
	"./engine/vae/vaemetal/",
	"./engine/qwen3vl/qwen3vlmetal/",
	"./engine/qi21/qi21metal/",
	"./engine/pipeline/pipelinemetal/",
}

// blocksPerStep is the denoiser's block count (the published model: 32 single-stream blocks).
const blocksPerStep = 32

// runner runs one command with extra environment and returns its standard output and error.
type runner func(env []string, name string, args ...string) (stdout, stderr []byte, err error)

func execRunner(env []string, name string, args ...string) ([]byte, []byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, io.MultiWriter(&errb, os.Stderr) // progress stays visible
	err := cmd.Run()
	return out.Bytes(), errb.Bytes(), err
}

// options are the command line's choices.
type options struct {
	Easel      string
	TestDevice string // EASEL_TEST_DEVICE for the test step: system or opaque
	GOOS       string // where it runs: steps 2 and 3 run on darwin only
}

func main() {
	easel := flag.String("easel", "./easel", "the built easel binary")
	out := flag.String("out", "mac-check-report.md", "where to write the report")
	force := flag.Bool("force", false, "run off a Mac anyway (the test step only; it says nothing about a Mac's GPU)")
	testDevice := flag.String("test-device", "system", "the device of the test step: system (the Mac's GPU) or opaque (the emulator seen as a GPU, for checking off a Mac)")
	flag.Parse()
	if runtime.GOOS != "darwin" && !*force {
		fmt.Fprintln(os.Stderr, "make mac-check runs Easel on a Mac's own GPU: run it on a Mac with Apple silicon (make test is the check on Linux; -force -test-device opaque runs its test step here).")
		os.Exit(1)
	}
	if *testDevice != "system" && *testDevice != "opaque" {
		fmt.Fprintf(os.Stderr, "maccheck: -test-device %q: use system (the Mac's GPU) or opaque (the emulator seen as a GPU)\n", *testDevice)
		os.Exit(2)
	}
	rep := check(execRunner, options{Easel: *easel, TestDevice: *testDevice, GOOS: runtime.GOOS}, time.Now())
	if err := os.WriteFile(*out, []byte(rep.Markdown()), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "maccheck: writing the report: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("\nwrote %s: paste it into a new issue of Easel's tracker (%s)\n", *out, rep.Summary())
	if !rep.OK() {
		os.Exit(1)
	}
}

// report is what the steps found.
type report struct {
	When       time.Time
	Machine    machine
	TestDevice string
	OffMac     string // why steps 2 and 3 did not run ("" on a Mac)

	Parity       parityResult
	ParityErr    string
	Diagnose     json.RawMessage
	DiagnoseErr  string
	Bench        json.RawMessage
	BenchErr     string
	BlockMS      float64 // median wall time of one block at 1024²
	BlockDevMS   float64 // its device time
	Device       string
	SecondsPerSt float64 // blocksPerStep × BlockMS / 1000
}

// testArgs are the test step's go test arguments: one package at a time, JSON events.
func testArgs() []string {
	return append([]string{"test", "-p", "1", "-count=1", "-timeout", "60m", "-json"}, parityPackages...)
}

// check runs the steps with run.
func check(run runner, o options, now time.Time) *report {
	r := &report{When: now.UTC(), TestDevice: o.TestDevice, Machine: readMachine(run, o.GOOS)}

	env := []string{"EASEL_TEST_DEVICE=" + o.TestDevice}
	if o.TestDevice == "opaque" {
		env = append(env, "EASEL_REQUIRE_EMULATOR=1") // the emulator must run, never skip
	}
	stdout, stderr, err := run(env, "go", testArgs()...)
	r.Parity = parseTestJSON(stdout)
	if err != nil && r.Parity.Failed == 0 && len(r.Parity.BuildErrors) == 0 && len(r.Parity.PackageFailures) == 0 {
		r.ParityErr = fmt.Sprintf("go test: %v\n%s", err, tail(stderr, 60))
	}

	if o.GOOS != "darwin" {
		r.OffMac = fmt.Sprintf("not run: this is %s, not a Mac (the self-test and the step timing need the Mac's GPU)", o.GOOS)
		return r
	}
	stdout, stderr, err = run(nil, o.Easel, "diagnose", "--json", "--rerun")
	if err != nil || !json.Valid(stdout) {
		r.DiagnoseErr = fmt.Sprintf("easel diagnose --json --rerun: %v\n%s", err, tail(stderr, 40))
	} else {
		r.Diagnose = stdout
		r.Machine.GPUFamily = gpuFamilyOf(stdout)
	}

	stdout, stderr, err = run(nil, o.Easel, "bench", "dit-metal", "--rows", "4096", "--prefix", "256", "--reps", "3", "--json")
	var bench struct {
		Device   string `json:"device"`
		Emulated bool   `json:"emulated"`
		Blocks   []struct {
			MedianMS float64 `json:"median_wall_ms"`
			DeviceMS float64 `json:"median_device_ms"`
		} `json:"blocks"`
	}
	switch {
	case err != nil:
		r.BenchErr = fmt.Sprintf("easel bench dit-metal: %v\n%s", err, tail(stderr, 40))
	case json.Unmarshal(stdout, &bench) != nil || len(bench.Blocks) == 0:
		r.BenchErr = fmt.Sprintf("easel bench dit-metal printed no block timing:\n%s", tail(stdout, 40))
	case bench.Emulated:
		r.BenchErr = "easel bench dit-metal ran on the emulator, not the GPU"
	default:
		r.Bench, r.Device = stdout, bench.Device
		r.BlockMS, r.BlockDevMS = bench.Blocks[0].MedianMS, bench.Blocks[0].DeviceMS
		r.SecondsPerSt = blocksPerStep * r.BlockMS / 1000
	}
	return r
}

// tail is the last n lines of b.
func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("… (%d lines before)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
