package layering

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// pkg is what go list -deps -json says of one package of the module.
type pkg struct {
	ImportPath string
	Deps       []string // every package it needs to build, transitively (tests excluded)
	Standard   bool
}

// Dependencies outside the module count too (the rule on Fyne); the rules' sources are the
// module's own packages.

// graph lists every package of the module with its non-test dependencies.
func graph(t *testing.T) map[string]pkg {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	cmd := exec.Command("go", "list", "-deps", "-json", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -json ./...: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if !p.Standard && under(p.ImportPath, "easel") {
			pkgs[p.ImportPath] = p
		}
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages of the module; the graph cannot be right", len(pkgs))
	}
	return pkgs
}

// under reports whether path is root or a package below it.
func under(path, root string) bool { return path == root || strings.HasPrefix(path, root+"/") }

// rule is one arrow the layers forbid: no package that from selects may need (directly or
// through others) a package that to selects.
type rule struct {
	name     string
	from, to func(string) bool
}

func prefix(roots ...string) func(string) bool {
	return func(p string) bool {
		return slices.ContainsFunc(roots, func(r string) bool { return under(p, r) })
	}
}

// metalPackage is a device path or the device runtime of the module: a package named …metal or
// metalops.
func metalPackage(p string) bool {
	if !under(p, "easel") {
		return false
	}
	last := p[strings.LastIndex(p, "/")+1:]
	return strings.HasSuffix(last, "metal") || last == "metalops"
}

var rules = []rule{
	{"the shared ML layer (engine/ml/…) never needs the denoiser (engine/qi21)",
		prefix("easel/engine/ml"), prefix("easel/engine/qi21")},
	{"the engine never needs the application or the UI",
		prefix("easel/engine"), prefix("easel/app", "easel/ui")},
	{"the application never needs the UI",
		prefix("easel/app"), prefix("easel/ui")},
	{"the engine never needs Fyne",
		prefix("easel/engine"), prefix("fyne.io")},
	{"internal/ (test and tool support) is needed only by tests, tools and itself",
		func(p string) bool { return !under(p, "easel/internal") && !under(p, "easel/tools") }, prefix("easel/internal")},
	{"the networks (qi21, qwen3vl, vae and their sub-packages) never need the converter",
		prefix("easel/engine/qi21", "easel/engine/qwen3vl", "easel/engine/vae"), prefix("easel/engine/convert")},
	{"the pipeline outside its Metal wiring (engine/pipeline/pipelinemetal) needs no Metal package",
		func(p string) bool {
			return under(p, "easel/engine/pipeline") && !under(p, "easel/engine/pipeline/pipelinemetal")
		}, metalPackage},
	{"the networks and the ML layer never need the pipeline",
		prefix("easel/engine/ml", "easel/engine/qi21", "easel/engine/qwen3vl", "easel/engine/vae"), prefix("easel/engine/pipeline")},
	{"the ML layer never needs a network",
		prefix("easel/engine/ml"), prefix("easel/engine/qi21", "easel/engine/qwen3vl", "easel/engine/vae")},
	{"the kernels and their emulator (kernels/…) never need the engine, the application or the UI",
		prefix("easel/kernels"), prefix("easel/engine", "easel/app", "easel/ui")},
}

// TestDependenciesPointDown checks every rule against every package's non-test dependencies and
// names each arrow that breaks one.
func TestDependenciesPointDown(t *testing.T) {
	pkgs := graph(t)
	for _, r := range rules {
		if bad := violations(pkgs, r); len(bad) > 0 {
			t.Errorf("%s; broken by:\n\t%s", r.name, strings.Join(bad, "\n\t"))
		}
	}
}

// violations are the arrows of pkgs that break r, sorted.
func violations(pkgs map[string]pkg, r rule) []string {
	var bad []string
	for path, p := range pkgs {
		if !r.from(path) {
			continue
		}
		for _, d := range p.Deps {
			if r.to(d) {
				bad = append(bad, path+" → "+d)
			}
		}
	}
	slices.Sort(bad)
	return bad
}

// TestRulesCatchBackwardArrows runs every rule over a made-up graph with one arrow each rule
// forbids, and one graph with none.
func TestRulesCatchBackwardArrows(t *testing.T) {
	bad := map[string]pkg{
		"easel/engine/ml/metal":               {Deps: []string{"easel/engine/qi21"}},
		"easel/engine/sched":                  {Deps: []string{"easel/app/settings", "fyne.io/fyne/v2"}},
		"easel/app/jobs":                      {Deps: []string{"easel/ui/setup"}},
		"easel/engine/cmf":                    {Deps: []string{"easel/internal/golden"}},
		"easel/engine/qwen3vl":                {Deps: []string{"easel/engine/convert", "easel/engine/pipeline"}},
		"easel/engine/pipeline":               {Deps: []string{"easel/engine/vae/vaemetal"}},
		"easel/engine/ml/cpu":                 {Deps: []string{"easel/engine/vae", "easel/engine/pipeline"}},
		"easel/engine/pipeline/pipelinemetal": {Deps: []string{"easel/engine/qi21/qi21metal", "easel/internal/x"}},
		"easel/kernels/emu/emutest":           {Deps: []string{"easel/engine/ml/metal"}},
	}
	good := map[string]pkg{
		"easel/engine/pipeline/pipelinemetal": {Deps: []string{"easel/engine/qi21/qi21metal", "easel/engine/pipeline"}},
		"easel/engine/pipeline":               {Deps: []string{"easel/engine/qi21", "easel/engine/ml"}},
		"easel/tools/goldenvariant":           {Deps: []string{"easel/internal/golden"}},
		"easel/internal/tinymodel":            {Deps: []string{"easel/internal/golden", "easel/engine/convert"}},
		"easel/ui":                            {Deps: []string{"easel/app/jobs", "fyne.io/fyne/v2"}},
		"easel/internal/testdevice":           {Deps: []string{"easel/engine/ml/metal", "easel/kernels/emu"}},
	}
	for _, r := range rules {
		if v := violations(bad, r); len(v) == 0 {
			t.Errorf("%s: the made-up backward arrows pass", r.name)
		}
		if v := violations(good, r); len(v) > 0 {
			t.Errorf("%s: arrows that point down fail: %v", r.name, v)
		}
	}
}

// TestRulesSelectPackages keeps the rules from passing vacuously: every rule's source side names
// packages that exist.
func TestRulesSelectPackages(t *testing.T) {
	pkgs := graph(t)
	for _, r := range rules {
		n := 0
		for path := range pkgs {
			if r.from(path) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("%s: no package of the module is on its source side", r.name)
		}
	}
}
