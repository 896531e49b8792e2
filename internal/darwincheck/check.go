// Package darwincheck type-checks Go packages for another GOOS/GOARCH (by default darwin/arm64),
// cgo files included, without a C toolchain or a Mac. It asks `go list -deps -json` for each
// package's files (nothing is compiled), then runs go/types over every package from source with
// FakeImportC, so references to C.xxx are accepted unchecked.
//
// It catches the Go side of darwin-only code: wrong darwinkit or Fyne method names and
// signatures, type errors, build tags, missing imports. It cannot see Objective-C preambles,
// link errors or anything decided at run time; only a Mac build confirms those.
package darwincheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Options selects what to check.
type Options struct {
	Dir         string   // the module directory to run `go list` in ("" = current)
	GOOS        string   // default "darwin"
	GOARCH      string   // default "arm64"
	Tags        []string // extra build tags
	Tests       bool     // include _test.go files
	KeepInvalid bool     // keep "invalid type" errors (artifacts of FakeImportC)
	Patterns    []string // default "./..."
	Darwinkit   bool     // also lint every call into darwinkit (darwinkit.go)
}

// Report is the outcome of one check.
type Report struct {
	Errors     []string // "file:line:col: message", only for the named packages
	Packages   int      // packages type-checked, dependencies and std included
	DepErrors  int      // errors in dependencies (not counted as failures)
	Suppressed int      // FakeImportC "invalid type" messages dropped
	Findings   []string // with Options.Darwinkit: "file:line:col: message", one per misuse of darwinkit
	KitCalls   int      // with Options.Darwinkit: calls from the module into darwinkit examined
	Elapsed    time.Duration
}

type listPkg struct {
	ImportPath string
	Dir        string
	DepOnly    bool
	GoFiles    []string
	CgoFiles   []string
	ImportMap  map[string]string
	Module     *struct{ GoVersion string }
	Error      *struct{ Err string }
}

// Check type-checks the packages named by opts.Patterns and everything they import.
func Check(opts Options) (*Report, error) {
	start := time.Now()
	if opts.GOOS == "" {
		opts.GOOS = "darwin"
	}
	if opts.GOARCH == "" {
		opts.GOARCH = "arm64"
	}
	if len(opts.Patterns) == 0 {
		opts.Patterns = []string{"./..."}
	}
	pkgs, err := list(opts)
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	fset := token.NewFileSet()
	done := map[string]*types.Package{"unsafe": types.Unsafe}
	sizes := types.SizesFor("gc", opts.GOARCH)
	ctxt := types.NewContext()
	seen := map[string]bool{} // with Tests a file is checked in p and in "p [p.test]"
	var lint *kitLint
	if opts.Darwinkit {
		lint = newKitLint(fset)
	}
	for _, p := range pkgs {
		if p.ImportPath == "unsafe" || p.ImportPath == "C" || strings.HasSuffix(p.ImportPath, ".test") {
			continue
		}
		report := func(msg string) {
			if p.DepOnly {
				rep.DepErrors++
				return
			}
			if !seen[msg] {
				seen[msg] = true
				rep.Errors = append(rep.Errors, msg)
			}
		}
		if p.Error != nil {
			report(fmt.Sprintf("%s: %s", p.ImportPath, p.Error.Err))
		}
		var files []*ast.File
		for _, name := range append(append([]string{}, p.GoFiles...), p.CgoFiles...) {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				report(err.Error())
				continue
			}
			files = append(files, f)
		}
		importMap := p.ImportMap
		conf := types.Config{
			Context:     ctxt,
			FakeImportC: true,
			Sizes:       sizes,
			Importer: importerFunc(func(path string) (*types.Package, error) {
				if m, ok := importMap[path]; ok {
					path = m
				}
				if tp, ok := done[path]; ok {
					return tp, nil
				}
				return nil, fmt.Errorf("package %q not (yet) type-checked", path)
			}),
			Error: func(err error) {
				// With FakeImportC every C.xxx has an invalid type; a few operations on such
				// values still report "invalid type". Those are not errors in the Go code.
				if !opts.KeepInvalid && strings.Contains(err.Error(), "invalid type") {
					rep.Suppressed++
					return
				}
				report(err.Error())
			},
		}
		if p.Module != nil && p.Module.GoVersion != "" {
			conf.GoVersion = "go" + p.Module.GoVersion
		}
		info := &types.Info{}
		keep := lint != nil && (!p.DepOnly || isKitPath(p.ImportPath))
		if keep {
			info.Uses = map[*ast.Ident]types.Object{}
			info.Defs = map[*ast.Ident]types.Object{}
			info.Instances = map[*ast.Ident]types.Instance{}
		}
		tp, _ := conf.Check(p.ImportPath, fset, files, info)
		done[p.ImportPath] = tp
		rep.Packages++
		if keep {
			lint.add(p.ImportPath, !p.DepOnly, files, info)
		}
	}
	if lint != nil {
		rep.Findings = lint.run()
		rep.KitCalls = len(lint.calls)
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

func list(opts Options) ([]*listPkg, error) {
	args := []string{"list", "-e", "-deps", "-json=ImportPath,Dir,DepOnly,GoFiles,CgoFiles,ImportMap,Module,Error"}
	if len(opts.Tags) > 0 {
		args = append(args, "-tags", strings.Join(opts.Tags, ","))
	}
	if opts.Tests {
		args = append(args, "-test")
	}
	args = append(args, opts.Patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = opts.Dir
	cmd.Env = append(os.Environ(), "GOOS="+opts.GOOS, "GOARCH="+opts.GOARCH, "CGO_ENABLED=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list for %s/%s failed: %v\n%s", opts.GOOS, opts.GOARCH, err, stderr.String())
	}
	var pkgs []*listPkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listPkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("reading go list output: %v", err)
		}
		pkgs = append(pkgs, &p)
	}
	return pkgs, nil
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
