// Command easel runs Qwen-Image-2.1 locally. With no arguments it opens the desktop window;
// with a subcommand (see `easel help`) it works from the terminal.
package main

import (
	"os"

	"easel/app/cli"
	"easel/ui"
)

func main() {
	args := cli.LaunchArgs(os.Args[1:]) // Finder's -psn_… is not a subcommand: open the window
	if len(args) == 0 {
		ui.Run()
		return
	}
	os.Exit(cli.Run(args, os.Stdout, os.Stderr))
}
