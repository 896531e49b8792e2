package darwincheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// kitModule lays out a throwaway module requiring darwinkit v0.5.0 (go.sum from this module, so
// the module cache answers) with src as its only darwin package, and lints it.
func kitModule(t *testing.T, src string) *Report {
	t.Helper()
	sum, err := os.ReadFile("../../go.sum")
	if err != nil {
		t.Fatal(err)
	}
	dir := writeModule(t, map[string]string{"p/p_darwin.go": src, "go.sum": string(sum)})
	mod := "module probe\n\ngo 1.26\n\nrequire github.com/progrium/darwinkit v0.5.0\n\nrequire github.com/go-test/deep v1.1.0 // indirect\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Check(Options{Dir: dir, Darwinkit: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) > 0 {
		t.Fatalf("the test package does not type-check for darwin: %q", rep.Errors)
	}
	return rep
}

// rulePhrase is the words each rule's finding carries.
var rulePhrase = map[string]string{
	"wraps":         "passes its argument through objc.WrapAsProtocol",
	"over-release":  "already autoreleased it",
	"leak":          "is never released",
	"slice-result":  sliceResultPhrase,
	"narrow-result": narrowResultPhrase,
}

var wantRE = regexp.MustCompile(`// want: (\S+) (\S+)`)

// TestDarwinkitLintFindsEachMadeUpViolation feeds every testdata/kitlint/violation_*.go through
// the lint: each `// want: RULE NAME` line must be reported with that rule's words and the name,
// and nothing else may be reported.
func TestDarwinkitLintFindsEachMadeUpViolation(t *testing.T) {
	files, _ := filepath.Glob("testdata/kitlint/violation_*.go")
	if len(files) != 4 {
		t.Fatalf("want the four violation files (wraps, over-release, leak, results), found %v", files)
	}
	seenRules := map[string]bool{}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			rep := kitModule(t, string(src))
			matched := make([]bool, len(rep.Findings))
			for i, line := range strings.Split(string(src), "\n") {
				m := wantRE.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				seenRules[m[1]] = true
				at := "p_darwin.go:" + strconv.Itoa(i+1) + ":"
				found := false
				for j, f := range rep.Findings {
					if strings.Contains(f, at) && strings.Contains(f, rulePhrase[m[1]]) && strings.Contains(f, strings.Trim(m[2], `"`)) {
						found, matched[j] = true, true
					}
				}
				if !found {
					t.Errorf("line %d: no %s finding naming %s; findings: %q", i+1, m[1], m[2], rep.Findings)
				}
			}
			for j, ok := range matched {
				if !ok {
					t.Errorf("unexpected finding %q", rep.Findings[j])
				}
			}
		})
	}
	for rule := range rulePhrase {
		if !seenRules[rule] {
			t.Errorf("no made-up violation of rule %q", rule)
		}
	}
}

// TestDarwinkitLintPassesCorrectUse: the right way to do each thing gives no finding.
func TestDarwinkitLintPassesCorrectUse(t *testing.T) {
	src, err := os.ReadFile("testdata/kitlint/clean.go")
	if err != nil {
		t.Fatal(err)
	}
	if rep := kitModule(t, string(src)); len(rep.Findings) != 0 {
		t.Fatalf("correct darwinkit use reported: %q", rep.Findings)
	}
}

// TestDarwinkitLintPassesOnTheTree: the module's own darwin code (the Metal device, the
// diagnostics host probe, the free-space probe, objcsafe, the activities, the Trash) has no
// finding, and the lint really walked its calls into darwinkit (dozens of them), so the pass is
// not vacuous. make darwin-check runs the same lint over every package.
func TestDarwinkitLintPassesOnTheTree(t *testing.T) {
	rep, err := Check(Options{Dir: "../..", Darwinkit: true, Patterns: []string{"./engine/ml/metal/", "./app/diagnose/", "./engine/freespace/", "./engine/objcsafe/", "./app/activity/", "./app/desktop/"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) > 0 || len(rep.Findings) > 0 {
		t.Fatalf("errors %q\nfindings %q", rep.Errors, rep.Findings)
	}
	if rep.KitCalls < 40 {
		t.Fatalf("the lint examined %d calls into darwinkit; the Metal device alone makes more", rep.KitCalls)
	}
	t.Logf("%d calls into darwinkit examined", rep.KitCalls)
}
