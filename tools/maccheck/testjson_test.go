package main

import (
	"os"
	"strings"
	"testing"
)

// recorded reads a `go test -p 1 -json` stream recorded from a throwaway module (testdata):
// build-panic-fail.jsonl has a package whose dependency does not compile, a package whose second
// test panics (its third never runs) and a package with a failing, a skipped and a passing test;
// goroutine-panic.jsonl has a panic in a goroutine a test started, which ends the binary with
// no fail event for the test.
func recorded(t *testing.T, name string) parityResult {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return parseTestJSON(b)
}

func TestParseQuotesTheCompilerPanicsAndFailures(t *testing.T) {
	r := recorded(t, "build-panic-fail.jsonl")
	if r.Passed != 2 || r.Failed != 2 || r.Skipped != 1 || r.Packages != 3 {
		t.Fatalf("passed %d failed %d skipped %d packages %d", r.Passed, r.Failed, r.Skipped, r.Packages)
	}
	compiler := `dep/dep.go:3:23: cannot use "x" (untyped string constant) as int value in return statement`
	if got := r.BuildErrors["probe/dep"]; !strings.Contains(got, compiler) || !strings.HasPrefix(got, "# probe/dep\n") {
		t.Fatalf("build errors %q", r.BuildErrors)
	}
	if r.Unbuilt["probe/bad"] != "probe/dep" || len(r.Unbuilt) != 1 {
		t.Fatalf("unbuilt %v, want probe/bad blocked by probe/dep", r.Unbuilt)
	}
	if len(r.Panics) != 1 || r.Panics[0] != "probe/pan TestB" {
		t.Fatalf("panics %q", r.Panics)
	}
	if out := r.Failures["probe/pan TestB"]; !strings.Contains(out, "panic: assignment to entry in nil map") || !strings.Contains(out, "pan_test.go:6") {
		t.Fatalf("the panic's output is not quoted whole:\n%s", out)
	}
	if out := r.Failures["probe/ok TestFails"]; out != "=== RUN   TestFails\n    ok_test.go:5: line one\n    ok_test.go:5: want 1, got 2\n--- FAIL: TestFails (0.00s)\n" {
		t.Fatalf("the failure's output is not verbatim:\n%q", out)
	}
	if r.SkipReasons["needs a thing"] != 1 || len(r.PackageFailures) != 0 {
		t.Fatalf("skips %v, package failures %v", r.SkipReasons, r.PackageFailures)
	}

	rep := &report{Parity: r, TestDevice: "opaque", OffMac: "not run"}
	md := rep.Markdown()
	for _, want := range []string{"### BUILD FAILED probe/dep", compiler, "### PANIC probe/pan TestB", "the tests of probe/pan after this one did not run",
		"So the tests of probe/bad did not run.", "### FAIL probe/ok TestFails", "want 1, got 2", "Test step FAILED", "1 build failure(s), 1 panic(s)"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	if rep.OK() {
		t.Error("a build failure and a panic left the check OK")
	}
}

func TestParseCountsATestTheBinaryDiedIn(t *testing.T) {
	r := recorded(t, "goroutine-panic.jsonl")
	if r.Passed != 1 || r.Failed != 1 || len(r.Panics) != 1 || r.Panics[0] != "probe/gor TestBackground" {
		t.Fatalf("passed %d failed %d panics %q", r.Passed, r.Failed, r.Panics)
	}
	if out := r.Failures["probe/gor TestBackground"]; !strings.Contains(out, "invalid memory address or nil pointer dereference") {
		t.Fatalf("output %q", out)
	}
}

// TestParseCountsATestWhoseSubtestsAllSkippedAsSkipped: a table test whose every case skipped
// ran nothing, so it is a skip with the cases' reason, not a pass.
func TestParseCountsATestWhoseSubtestsAllSkippedAsSkipped(t *testing.T) {
	r := parseTestJSON([]byte(`{"Action":"run","Package":"p","Test":"TestTable"}
{"Action":"run","Package":"p","Test":"TestTable/a"}
{"Action":"output","Package":"p","Test":"TestTable/a","Output":"    r_test.go:9: needs the emulator's fault injection\n"}
{"Action":"skip","Package":"p","Test":"TestTable/a"}
{"Action":"run","Package":"p","Test":"TestTable/b"}
{"Action":"skip","Package":"p","Test":"TestTable/b"}
{"Action":"pass","Package":"p","Test":"TestTable"}
{"Action":"run","Package":"p","Test":"TestMixed"}
{"Action":"skip","Package":"p","Test":"TestMixed/a"}
{"Action":"pass","Package":"p","Test":"TestMixed/b"}
{"Action":"pass","Package":"p","Test":"TestMixed"}
{"Action":"pass","Package":"p"}
`))
	if r.Passed != 1 || r.Skipped != 1 || r.SkipReasons["needs the emulator's fault injection (every subtest)"] != 1 {
		t.Fatalf("passed %d skipped %d reasons %v", r.Passed, r.Skipped, r.SkipReasons)
	}
}

// TestParseReportsAPackageFailureOutsideTests: a package that fails with no failed test (a
// panic in TestMain, a timeout) is reported with its own output.
func TestParseReportsAPackageFailureOutsideTests(t *testing.T) {
	r := parseTestJSON([]byte(`{"Action":"start","Package":"easel/kernels"}
{"Action":"output","Package":"easel/kernels","Output":"panic: test timed out after 60m0s\n"}
{"Action":"output","Package":"easel/kernels","Output":"FAIL\teasel/kernels\t3600.1s\n"}
{"Action":"fail","Package":"easel/kernels","Elapsed":3600.1}
`))
	if got := r.PackageFailures["easel/kernels"]; !strings.Contains(got, "test timed out after 60m0s") {
		t.Fatalf("package failures %q", r.PackageFailures)
	}
	if (&report{Parity: r}).testStepOK() {
		t.Fatal("a failed package left the test step OK")
	}
}

func TestFencedKeepsBackticksInside(t *testing.T) {
	if got := fenced("a ``` b"); got != "````\na ``` b\n````" {
		t.Fatalf("fenced = %q", got)
	}
}
