// Command darwincheck type-checks this module for darwin/arm64 (cgo files included) on a machine
// without a Mac or a C toolchain. `make darwin-check` runs it; it exits 1 when a package of the
// module has a type error or a darwinkit finding (a call into a wrapper that panics or hands Metal
// an adaptor, an over-release, a leak), printing each as file:line:col.
//
// Usage: darwincheck [-goos darwin] [-goarch arm64] [-tags a,b] [-test] [-darwinkit=false] [-keepinvalid] [packages]
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"easel/internal/darwincheck"
)

func main() {
	var opts darwincheck.Options
	flag.StringVar(&opts.GOOS, "goos", "darwin", "target GOOS")
	flag.StringVar(&opts.GOARCH, "goarch", "arm64", "target GOARCH")
	tags := flag.String("tags", "", "comma-separated build tags")
	flag.BoolVar(&opts.Tests, "test", false, "also type-check _test.go files")
	flag.BoolVar(&opts.Darwinkit, "darwinkit", true, "also lint every call into darwinkit (internal/darwincheck/darwinkit.go)")
	flag.BoolVar(&opts.KeepInvalid, "keepinvalid", false, "keep 'invalid type' errors (usually artifacts of FakeImportC around C values)")
	flag.Parse()
	if *tags != "" {
		opts.Tags = strings.Split(*tags, ",")
	}
	opts.Patterns = flag.Args()
	rep, err := darwincheck.Check(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "darwincheck:", err)
		os.Exit(2)
	}
	for _, e := range rep.Errors {
		fmt.Println(e)
	}
	for _, f := range rep.Findings {
		fmt.Println(f)
	}
	fmt.Printf("darwincheck %s/%s: %d packages in %.1fs, %d errors in this module, %d in dependencies, %d FakeImportC messages suppressed, %d darwinkit findings in %d calls\n",
		opts.GOOS, opts.GOARCH, rep.Packages, rep.Elapsed.Seconds(), len(rep.Errors), rep.DepErrors, rep.Suppressed, len(rep.Findings), rep.KitCalls)
	if len(rep.Errors) > 0 || len(rep.Findings) > 0 {
		os.Exit(1)
	}
}
