// Command maccheck is `make mac-check`: the first run of Easel's Metal path on a Mac's own GPU,
// written as one report to paste into an issue. It runs, in order:
//
//  1. the emulator's parity tests against the real device (EASEL_TEST_DEVICE=system: the same
//     tests `make test` runs on the Metal emulator, each kernel and network against the CPU;
//     tests that need the emulator's fault injection or chosen limits skip themselves);
//  2. the first-use self-test, fresh (`easel diagnose --json --rerun`), with the machine, the GPU
//     and the cached tuning in the same JSON;
//  3. one full-size denoiser block at 1024² (4096 target rows, 256 prefix rows, the published
//     geometry with random q4tp weights: `easel bench dit-metal --rows 4096 --prefix 256 --reps 3
//     --json`), from which one step's seconds are 32 blocks × the block's median wall time (one
//     program: CFG 1).
//
// Every step runs even when one before failed; the report says which failed and how. The exit
// status is 1 when any step failed. Nothing here is measured on Linux: the command refuses to run
// off a Mac unless -force is given (tests drive it with a stand-in runner).
//
// Usage: maccheck [-easel ./easel] [-out mac-check-report.md] [-force]
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"sort"
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

func main() {
	easel := flag.String("easel", "./easel", "the built easel binary")
	out := flag.String("out", "mac-check-report.md", "where to write the report")
	force := flag.Bool("force", false, "run off a Mac anyway (the figures then say nothing about a Mac)")
	flag.Parse()
	if runtime.GOOS != "darwin" && !*force {
		fmt.Fprintln(os.Stderr, "make mac-check runs Easel on a Mac's own GPU: run it on a Mac with Apple silicon (make test is the check on Linux).")
		os.Exit(1)
	}
	rep := check(execRunner, *easel, time.Now())
	if err := os.WriteFile(*out, []byte(rep.Markdown()), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "maccheck: writing the report: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("\nwrote %s: paste it into an issue (%s)\n", *out, rep.Summary())
	if !rep.OK() {
		os.Exit(1)
	}
}

// report is what the three steps found.
type report struct {
	When time.Time

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

// parityResult counts the parity tests by outcome and keeps each failure's output.
type parityResult struct {
	Passed, Failed, Skipped int
	Failures                map[string]string // "pkg TestName" → output
	SkipReasons             map[string]int    // a skip's reason → how many tests gave it
}

// check runs the three steps with run.
func check(run runner, easel string, now time.Time) *report {
	r := &report{When: now.UTC()}

	args := append([]string{"test", "-count=1", "-timeout", "60m", "-json"}, parityPackages...)
	stdout, stderr, err := run([]string{"EASEL_TEST_DEVICE=system"}, "go", args...)
	r.Parity = parseTestJSON(stdout)
	if err != nil && r.Parity.Failed == 0 {
		r.ParityErr = fmt.Sprintf("go test: %v\n%s", err, tail(stderr, 40))
	}

	stdout, stderr, err = run(nil, easel, "diagnose", "--json", "--rerun")
	if err != nil || !json.Valid(stdout) {
		r.DiagnoseErr = fmt.Sprintf("easel diagnose --json --rerun: %v\n%s", err, tail(stderr, 40))
	} else {
		r.Diagnose = stdout
	}

	stdout, stderr, err = run(nil, easel, "bench", "dit-metal", "--rows", "4096", "--prefix", "256", "--reps", "3", "--json")
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

// parseTestJSON reads `go test -json` output (test2json events).
func parseTestJSON(b []byte) parityResult {
	res := parityResult{Failures: map[string]string{}, SkipReasons: map[string]int{}}
	output := map[string]*strings.Builder{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct {
			Action, Package, Test, Output string
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Test == "" || strings.Contains(ev.Test, "/") {
			continue // package-level lines and subtests (their parent counts them)
		}
		key := ev.Package + " " + ev.Test
		switch ev.Action {
		case "output":
			if output[key] == nil {
				output[key] = &strings.Builder{}
			}
			output[key].WriteString(ev.Output)
		case "pass":
			res.Passed++
		case "fail":
			res.Failed++
			if o := output[key]; o != nil {
				res.Failures[key] = tail([]byte(o.String()), 30)
			} else {
				res.Failures[key] = ""
			}
		case "skip":
			res.Skipped++
			reason := "no reason given"
			if o := output[key]; o != nil {
				for _, l := range strings.Split(o.String(), "\n") {
					if m := skipLine.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
						reason = m[1]
					}
				}
			}
			res.SkipReasons[reason]++
		}
	}
	return res
}

// skipLine is a t.Skip message as go test prints it: "file.go:LINE: reason".
var skipLine = regexp.MustCompile(`^\S+\.go:\d+: (.+)$`)

// tail is the last n lines of b.
func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("… (%d lines before)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// OK reports whether every step ran and every parity test passed or skipped.
func (r *report) OK() bool {
	return r.Parity.Failed == 0 && r.ParityErr == "" && r.DiagnoseErr == "" && r.BenchErr == ""
}

// Summary is one line for the terminal.
func (r *report) Summary() string {
	step := "no step timing"
	if r.SecondsPerSt > 0 {
		step = fmt.Sprintf("%.2f s/step at 1024²", r.SecondsPerSt)
	}
	return fmt.Sprintf("parity %d passed, %d failed, %d skipped; %s", r.Parity.Passed, r.Parity.Failed, r.Parity.Skipped, step)
}

// Markdown is the report to paste into an issue.
func (r *report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# make mac-check — %s\n\n", r.When.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "**%s**\n\n", r.Summary())

	b.WriteString("## 1. Parity tests on this Mac's GPU (EASEL_TEST_DEVICE=system)\n\n")
	fmt.Fprintf(&b, "Packages: %s\n\n", strings.Join(parityPackages, " "))
	fmt.Fprintf(&b, "%d passed, %d failed, %d skipped.\n\n", r.Parity.Passed, r.Parity.Failed, r.Parity.Skipped)
	if r.ParityErr != "" {
		fmt.Fprintf(&b, "The tests did not run:\n\n```\n%s\n```\n\n", r.ParityErr)
	}
	for _, k := range sortedKeys(r.Parity.Failures) {
		fmt.Fprintf(&b, "### FAIL %s\n\n```\n%s\n```\n\n", k, r.Parity.Failures[k])
	}
	if len(r.Parity.SkipReasons) > 0 {
		b.WriteString("Skipped:\n\n")
		for _, k := range sortedKeys(r.Parity.SkipReasons) {
			fmt.Fprintf(&b, "- %d× %s\n", r.Parity.SkipReasons[k], k)
		}
		b.WriteString("\n")
	}

	b.WriteString("## 2. Self-test and diagnostics (easel diagnose --json --rerun)\n\n")
	if r.DiagnoseErr != "" {
		fmt.Fprintf(&b, "Failed:\n\n```\n%s\n```\n\n", r.DiagnoseErr)
	} else {
		fmt.Fprintf(&b, "```json\n%s\n```\n\n", strings.TrimSpace(string(r.Diagnose)))
	}

	b.WriteString("## 3. One full-size step at 1024² (easel bench dit-metal --rows 4096 --prefix 256 --reps 3)\n\n")
	if r.BenchErr != "" {
		fmt.Fprintf(&b, "Failed:\n\n```\n%s\n```\n", r.BenchErr)
	} else {
		fmt.Fprintf(&b, "%s: one block %.1f ms wall (median of 3), %.1f ms on the device; one step = %d blocks = **%.2f s/step** (one program, CFG 1).\n\n",
			r.Device, r.BlockMS, r.BlockDevMS, blocksPerStep, r.SecondsPerSt)
		fmt.Fprintf(&b, "```json\n%s\n```\n", strings.TrimSpace(string(r.Bench)))
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
