package desktop

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// ErrMissingTool is in the error when no program for the action is installed.
var ErrMissingTool = errors.New("the program for this is not installed")

// Opener runs desktop commands on one system. Tests replace LookPath and Run.
type Opener struct {
	GOOS    string
	Wayland bool
	// LookPath finds a program on $PATH (exec.LookPath).
	LookPath func(name string) (string, error)
	// Run runs a command to completion; wait is false for programs that may stay open (a file
	// manager), which are started and left to run.
	Run func(c Command, wait bool) error
	// TrashItem moves the file at path into the Finder's Trash and returns where it is now (on
	// macOS NSFileManager trashItemAtURL:resultingItemURL:error:; nil elsewhere).
	TrashItem func(path string) (inTrash string, err error)
}

// System is the Opener of the running system.
func System() *Opener {
	return &Opener{GOOS: runtime.GOOS, Wayland: os.Getenv("WAYLAND_DISPLAY") != "", LookPath: exec.LookPath, Run: runCommand, TrashItem: trashItem}
}

// Label is the wording for Reveal here ("Show in Finder" / "Show in folder").
func (o *Opener) Label() string { return RevealLabel(o.GOOS) }

// Reveal shows the file at path in the Finder or the file manager.
func (o *Opener) Reveal(path string) error {
	c, err := RevealCommand(o.GOOS, path)
	if err != nil {
		return err
	}
	c, err = o.pick([]Command{c})
	if err != nil {
		return fmt.Errorf("cannot show %s: %w; open %s yourself", filepath.Base(path), err, filepath.Dir(path))
	}
	if err := o.Run(c, false); err != nil {
		return fmt.Errorf("cannot show %s: %s failed: %v; open %s yourself", filepath.Base(path), c.Name, err, filepath.Dir(path))
	}
	return nil
}

// CopyImage puts the PNG at path on the clipboard as a picture.
func (o *Opener) CopyImage(path string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("cannot copy %s: the file is gone (%v); it may have been moved or deleted", filepath.Base(path), err)
	}
	cs, err := CopyImageCommands(o.GOOS, path, o.Wayland)
	if err != nil {
		return err
	}
	c, err := o.pick(cs)
	if err != nil {
		return fmt.Errorf("cannot copy %s: %w", filepath.Base(path), err)
	}
	if err := o.Run(c, true); err != nil {
		return fmt.Errorf("cannot copy %s: %s failed: %v", filepath.Base(path), c.Name, err)
	}
	return nil
}

// pick is the first command whose program is installed, or an error naming what to install.
func (o *Opener) pick(cs []Command) (Command, error) {
	var names []string
	for _, c := range cs {
		if _, err := o.LookPath(c.Name); err == nil {
			return c, nil
		}
		names = append(names, c.Name)
	}
	return Command{}, fmt.Errorf("%w: %s", ErrMissingTool, installHint(o.GOOS, names))
}
