// Package cli is Easel's command line: `easel help`, `--version` and the subcommands that later
// call the same app/ and engine/ services the window uses.
package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"easel/app"
)

// Command is one subcommand.
type Command struct {
	Name    string
	Usage   string // the argument synopsis
	Summary string // one line for `easel help`
	Run     func(args []string, stdout, stderr io.Writer) int
}

// Exit codes shared by every subcommand.
const (
	ExitOK      = 0
	ExitFailure = 1 // the command ran and failed (bad file, failed check)
	ExitUsage   = 2 // the command line itself is wrong
)

var commands = map[string]*Command{}

// register adds a subcommand; each lives in its own file.
func register(c *Command) { commands[c.Name] = c }

// Run dispatches args (without the program name) and returns the process exit code.
func Run(args []string, stdout, stderr io.Writer) int {
	args = LaunchArgs(args)
	if len(args) == 0 {
		usage(stdout)
		return ExitOK
	}
	switch args[0] {
	case "help", "-h", "--help", "-help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				fmt.Fprintf(stdout, "usage: easel %s %s\n\n%s\n", c.Name, c.Usage, c.Summary)
				return ExitOK
			}
		}
		usage(stdout)
		return ExitOK
	case "version", "-v", "--version", "-version":
		fmt.Fprintf(stdout, "%s %s\n", app.Name, app.Version)
		return ExitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "easel: unknown command %q; run `easel help` for the list\n", args[0])
		return ExitUsage
	}
	return c.Run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s — Qwen-Image-2.1 on your own machine\n\n", app.Name, app.Version)
	b.WriteString("usage:\n  easel                 open the window\n  easel COMMAND [args]  work from the terminal\n\ncommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %-10s %s\n", n, commands[n].Summary)
	}
	b.WriteString("  help       this text; `easel help COMMAND` for one command\n  --version  print the version\n")
	io.WriteString(w, b.String())
}
