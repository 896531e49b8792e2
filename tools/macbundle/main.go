// Command macbundle finishes a .app that `fyne package -os darwin` assembled (Info.plist: minimum
// macOS, document types, ...) and checks its structure. `make app` and the packaging test use it.
//
// Usage: macbundle [-check-only] Easel.app
package main

import (
	"flag"
	"fmt"
	"os"

	"easel/app"
	"easel/packaging"
)

func main() {
	checkOnly := flag.Bool("check-only", false, "only check the bundle, do not modify it")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: macbundle [-check-only] Easel.app")
		os.Exit(2)
	}
	bundle := flag.Arg(0)
	if !*checkOnly {
		if err := packaging.FinishInfoPlist(bundle); err != nil {
			fmt.Fprintln(os.Stderr, "macbundle:", err)
			os.Exit(1)
		}
	}
	if err := packaging.CheckBundle(bundle, app.ID, app.Version); err != nil {
		fmt.Fprintln(os.Stderr, "macbundle:", err)
		os.Exit(1)
	}
	fmt.Printf("%s: sound (macOS %s+, %s %s)\n", bundle, packaging.MinimumMacOS, app.ID, app.Version)
}
