// Command easel runs Qwen-Image-2.1 locally. With no arguments it opens the desktop window;
// with a subcommand (see `easel help`) it works from the terminal.
package main

import (
	"os"

	"easel/app/cli"
	"easel/ui"
)

func main() {
	args := os.Args[1:]
	if len(args) == 0 {
		ui.Run()
		return
	}
	os.Exit(cli.Run(args, os.Stdout, os.Stderr))
}
