package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// parityResult is what a `go test -json` stream says: the tests by outcome, each failure's
// output verbatim, the compiler's errors, panics, and package failures no test explains.
type parityResult struct {
	Passed, Failed, Skipped int
	// Failures maps "pkg TestName" to the test's whole output, its subtests' included.
	Failures map[string]string
	// SkipReasons counts the skipped tests by their skip message.
	SkipReasons map[string]int
	// BuildErrors maps a package that did not compile ("easel/kernels [easel/kernels.test]")
	// to the compiler's output (go test -json's build-output events, Go 1.24 and later).
	BuildErrors map[string]string
	// Unbuilt maps a package whose tests did not build to the package whose build failed
	// (go test -json's FailedBuild: the package itself or one it imports).
	Unbuilt map[string]string
	// Panics are the "pkg TestName" keys of Failures whose output has a Go panic: the test
	// binary stopped there, so the package's tests after it did not run.
	Panics []string
	// PackageFailures maps a failed package to its own output (outside any test) when no
	// failed test or build error of it explains the failure: a panic outside a test, a
	// timeout, a TestMain that failed.
	PackageFailures map[string]string
	// Packages is how many packages reported an outcome.
	Packages int
}

// testEvent is one line of go test -json (test2json): a test's or package's action, or a build's.
type testEvent struct {
	Action, Package, Test, Output string
	ImportPath                    string // build-output and build-fail events
	FailedBuild                   string // a package's fail event when a build failed
}

// parseTestJSON reads a `go test -json` stream.
func parseTestJSON(b []byte) parityResult {
	res := parityResult{Failures: map[string]string{}, SkipReasons: map[string]int{},
		BuildErrors: map[string]string{}, PackageFailures: map[string]string{}, Unbuilt: map[string]string{}}
	output := map[string]*strings.Builder{} // "pkg TestName" (subtests under their top test) → output
	pkgOutput := map[string]*strings.Builder{}
	build := map[string]*strings.Builder{}
	running := map[string]bool{} // top-level tests started and not yet ended
	// subtests of each top-level test: how many ended, how many skipped, the first skip's output
	type subCount struct {
		ended, skipped int
		skipOut        string
	}
	subs := map[string]*subCount{}
	failedIn := map[string]int{} // failed tests per package
	appendTo := func(m map[string]*strings.Builder, k, s string) {
		if m[k] == nil {
			m[k] = &strings.Builder{}
		}
		m[k].WriteString(s)
	}
	fail := func(pkg, test string) {
		key := pkg + " " + test
		out := ""
		if o := output[key]; o != nil {
			out = o.String()
		}
		res.Failed++
		failedIn[pkg]++
		res.Failures[key] = out
		if panicLine.MatchString(out) {
			res.Panics = append(res.Panics, key)
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev testEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch ev.Action {
		case "build-output":
			appendTo(build, ev.ImportPath, ev.Output)
			continue
		case "build-fail":
			continue
		}
		if ev.Test == "" { // the package's own line
			switch ev.Action {
			case "output":
				appendTo(pkgOutput, ev.Package, ev.Output)
			case "pass", "skip":
				res.Packages++
			case "fail":
				res.Packages++
				// A test started and never ended: the binary stopped in it (a panic in
				// another goroutine ends it without a fail event).
				for key := range running {
					if pkg, test, _ := strings.Cut(key, " "); pkg == ev.Package {
						delete(running, key)
						fail(pkg, test)
					}
				}
				if ev.FailedBuild != "" {
					res.Unbuilt[ev.Package] = ev.FailedBuild
				}
				if ev.FailedBuild != "" && build[ev.FailedBuild] == nil {
					res.BuildErrors[ev.FailedBuild] = fmt.Sprintf("(%s did not build; go test gave no compiler output for it)\n", ev.FailedBuild)
				}
				if failedIn[ev.Package] == 0 && ev.FailedBuild == "" {
					res.PackageFailures[ev.Package] = textOf(pkgOutput[ev.Package])
				}
			}
			continue
		}
		top, _, sub := strings.Cut(ev.Test, "/")
		key := ev.Package + " " + top
		switch ev.Action {
		case "output":
			appendTo(output, key, ev.Output)
		case "run":
			if !sub {
				running[key] = true
			}
		case "pass", "skip", "fail":
			if sub {
				// the parent counts its subtests; one whose every subtest skipped is a skip
				c := subs[key]
				if c == nil {
					c = &subCount{}
					subs[key] = c
				}
				c.ended++
				if ev.Action == "skip" {
					if c.skipped == 0 {
						c.skipOut = textOf(output[key])
					}
					c.skipped++
				}
				continue
			}
			delete(running, key)
			if c := subs[key]; ev.Action == "pass" && c != nil && c.ended > 0 && c.skipped == c.ended {
				res.Skipped++
				res.SkipReasons[skipReason(c.skipOut)+" (every subtest)"]++
				continue
			}
			switch ev.Action {
			case "pass":
				res.Passed++
			case "fail":
				fail(ev.Package, top)
			case "skip":
				res.Skipped++
				res.SkipReasons[skipReason(textOf(output[key]))]++
			}
		}
	}
	for k, o := range build {
		res.BuildErrors[k] = o.String()
	}
	sort.Strings(res.Panics)
	return res
}

func textOf(b *strings.Builder) string {
	if b == nil {
		return ""
	}
	return b.String()
}

// skipReason is the last t.Skip message in a test's output ("file.go:LINE: reason").
func skipReason(out string) string {
	reason := "no reason given"
	for _, l := range strings.Split(out, "\n") {
		if m := skipLine.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			reason = m[1]
		}
	}
	return reason
}

// skipLine is a t.Skip message as go test prints it: "file.go:LINE: reason".
var skipLine = regexp.MustCompile(`^\S+\.go:\d+: (.+)$`)

// panicLine is the first line of a Go panic's report.
var panicLine = regexp.MustCompile(`(?m)^panic: `)
