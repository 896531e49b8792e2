package desktop

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Command is one program to run: its name (looked up on $PATH), its arguments, and a file to
// feed it on standard input ("" for none).
type Command struct {
	Name  string
	Args  []string
	Stdin string
}

// String is the command as a shell would show it (for messages and tests).
func (c Command) String() string {
	s := strings.Join(append([]string{c.Name}, c.Args...), " ")
	if c.Stdin != "" {
		s += " < " + c.Stdin
	}
	return s
}

// RevealLabel is the menu wording for Reveal on goos: "Show in Finder" on macOS, else "Show in
// folder".
func RevealLabel(goos string) string {
	if goos == "darwin" {
		return "Show in Finder"
	}
	return "Show in folder"
}

// RevealCommand is how goos shows the file at path: on macOS the Finder with the file selected
// (open -R); on Linux and the BSDs the file manager on its folder (xdg-open).
func RevealCommand(goos, path string) (Command, error) {
	switch goos {
	case "darwin":
		return Command{Name: "open", Args: []string{"-R", path}}, nil
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
		return Command{Name: "xdg-open", Args: []string{filepath.Dir(path)}}, nil
	}
	return Command{}, fmt.Errorf("showing files is not supported on %s: open %s yourself", goos, filepath.Dir(path))
}

// CopyImageCommands are the ways goos can put the PNG at path on the clipboard, best first; the
// first whose program is installed is used. On macOS osascript reads the file as PNG data; on
// Linux wl-copy (Wayland) and xclip (X11), the one for the running session first.
func CopyImageCommands(goos, path string, wayland bool) ([]Command, error) {
	switch goos {
	case "darwin":
		script := fmt.Sprintf(`set the clipboard to (read (POSIX file "%s") as «class PNGf»)`, appleScriptEscape(path))
		return []Command{{Name: "osascript", Args: []string{"-e", script}}}, nil
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
		wl := Command{Name: "wl-copy", Args: []string{"--type", "image/png"}, Stdin: path}
		x := Command{Name: "xclip", Args: []string{"-selection", "clipboard", "-t", "image/png", "-i", path}}
		if wayland {
			return []Command{wl, x}, nil
		}
		return []Command{x, wl}, nil
	}
	return nil, fmt.Errorf("copying images is not supported on %s: open %s in an image viewer and copy it there", goos, path)
}

// appleScriptEscape makes s safe inside an AppleScript string literal.
func appleScriptEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}

// installHint says which package provides a missing tool.
func installHint(goos string, names []string) string {
	if goos == "darwin" {
		return fmt.Sprintf("%s is part of macOS but was not found: check that /usr/bin is on $PATH", strings.Join(names, " / "))
	}
	var pkgs []string
	for _, n := range names {
		switch n {
		case "wl-copy":
			pkgs = append(pkgs, "wl-copy (Wayland: package wl-clipboard)")
		case "xclip":
			pkgs = append(pkgs, "xclip (X11: package xclip)")
		case "xdg-open":
			pkgs = append(pkgs, "xdg-open (package xdg-utils)")
		default:
			pkgs = append(pkgs, n)
		}
	}
	return "install " + strings.Join(pkgs, " or ") + ", then try again"
}
