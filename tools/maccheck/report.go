package main

import (
	"fmt"
	"sort"
	"strings"
)

// OK reports whether every step that runs here ran and every parity test passed or skipped.
func (r *report) OK() bool {
	return r.testStepOK() && r.DiagnoseErr == "" && r.BenchErr == ""
}

// testStepOK: the parity tests built, ran and none failed.
func (r *report) testStepOK() bool {
	p := r.Parity
	return p.Failed == 0 && len(p.BuildErrors) == 0 && len(p.PackageFailures) == 0 && r.ParityErr == "" && p.Packages > 0
}

// Summary is one line for the terminal.
func (r *report) Summary() string {
	step := "no step timing"
	if r.SecondsPerSt > 0 {
		step = fmt.Sprintf("%.2f s/step at 1024²", r.SecondsPerSt)
	}
	s := fmt.Sprintf("parity %d passed, %d failed, %d skipped", r.Parity.Passed, r.Parity.Failed, r.Parity.Skipped)
	if n := len(r.Parity.BuildErrors); n > 0 {
		s += fmt.Sprintf(", %d build failure(s)", n)
	}
	if n := len(r.Parity.Panics); n > 0 {
		s += fmt.Sprintf(", %d panic(s)", n)
	}
	return s + "; " + step
}

// maxQuoted bounds one quoted output (a runaway log); everything below it is quoted verbatim.
const maxQuoted = 2000

// Markdown is the report to paste into an issue.
func (r *report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# make mac-check — %s\n\n", r.When.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "**%s**\n\n", r.Summary())
	fmt.Fprintf(&b, "Machine: %s\n\n", r.Machine.Line())
	for _, n := range r.Machine.Notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	if len(r.Machine.Notes) > 0 {
		b.WriteString("\n")
	}

	where := "this Mac's GPU"
	if r.TestDevice == "opaque" {
		where = "the emulator seen as a GPU (a check off a Mac, not a GPU result)"
	}
	fmt.Fprintf(&b, "## 1. Parity tests on %s (EASEL_TEST_DEVICE=%s)\n\n", where, r.TestDevice)
	fmt.Fprintf(&b, "`go %s`\n\n", strings.Join(testArgs(), " "))
	verdict := "passed"
	if !r.testStepOK() {
		verdict = "FAILED"
	}
	fmt.Fprintf(&b, "Test step %s: %d packages reported; %d tests passed, %d failed, %d skipped.\n\n",
		verdict, r.Parity.Packages, r.Parity.Passed, r.Parity.Failed, r.Parity.Skipped)
	if r.ParityErr != "" {
		fmt.Fprintf(&b, "The tests did not run:\n\n%s\n\n", fenced(r.ParityErr))
	}
	for _, k := range sortedKeys(r.Parity.BuildErrors) {
		fmt.Fprintf(&b, "### BUILD FAILED %s\n\n%s\n\n", k, fenced(r.Parity.BuildErrors[k]))
		var blocked []string
		for _, pkg := range sortedKeys(r.Parity.Unbuilt) {
			if r.Parity.Unbuilt[pkg] == k {
				blocked = append(blocked, pkg)
			}
		}
		if len(blocked) > 0 {
			fmt.Fprintf(&b, "So the tests of %s did not run.\n\n", strings.Join(blocked, ", "))
		}
	}
	panicked := map[string]bool{}
	for _, k := range r.Parity.Panics {
		panicked[k] = true
	}
	for _, k := range sortedKeys(r.Parity.Failures) {
		if panicked[k] {
			pkg, _, _ := strings.Cut(k, " ")
			fmt.Fprintf(&b, "### PANIC %s\n\nThe test binary stopped here: the tests of %s after this one did not run.\n\n%s\n\n", k, pkg, fenced(r.Parity.Failures[k]))
			continue
		}
		fmt.Fprintf(&b, "### FAIL %s\n\n%s\n\n", k, fenced(r.Parity.Failures[k]))
	}
	for _, k := range sortedKeys(r.Parity.PackageFailures) {
		fmt.Fprintf(&b, "### FAIL %s (outside any test)\n\n%s\n\n", k, fenced(r.Parity.PackageFailures[k]))
	}
	if len(r.Parity.SkipReasons) > 0 {
		b.WriteString("Skipped:\n\n")
		for _, k := range sortedKeys(r.Parity.SkipReasons) {
			fmt.Fprintf(&b, "- %d× %s\n", r.Parity.SkipReasons[k], k)
		}
		b.WriteString("\n")
	}

	b.WriteString("## 2. Self-test and diagnostics (easel diagnose --json --rerun)\n\n")
	switch {
	case r.OffMac != "":
		fmt.Fprintf(&b, "%s.\n\n", r.OffMac)
	case r.DiagnoseErr != "":
		fmt.Fprintf(&b, "Failed:\n\n```\n%s\n```\n\n", r.DiagnoseErr)
	default:
		fmt.Fprintf(&b, "```json\n%s\n```\n\n", strings.TrimSpace(string(r.Diagnose)))
	}

	b.WriteString("## 3. One full-size step at 1024² (easel bench dit-metal --rows 4096 --prefix 256 --reps 3)\n\n")
	switch {
	case r.OffMac != "":
		fmt.Fprintf(&b, "%s.\n", r.OffMac)
	case r.BenchErr != "":
		fmt.Fprintf(&b, "Failed:\n\n```\n%s\n```\n", r.BenchErr)
	default:
		fmt.Fprintf(&b, "%s: one block %.1f ms wall (median of 3), %.1f ms on the device; one step = %d blocks = **%.2f s/step** (one program, CFG 1).\n\n",
			r.Device, r.BlockMS, r.BlockDevMS, blocksPerStep, r.SecondsPerSt)
		fmt.Fprintf(&b, "```json\n%s\n```\n", strings.TrimSpace(string(r.Bench)))
	}
	return b.String()
}

// fenced is out as it was printed in a Markdown code block (a fence longer than any run of
// backticks in it); past maxQuoted lines, the last maxQuoted.
func fenced(out string) string {
	body := tail([]byte(out), maxQuoted)
	fence := "```"
	for strings.Contains(body, fence) {
		fence += "`"
	}
	return fence + "\n" + body + "\n" + fence
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
