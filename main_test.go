package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"easel/ui"
)

// runMainEnv makes the test binary run main() itself (TestMain), so the launch test starts the
// real program with the arguments it is given.
const runMainEnv = "EASEL_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) != "" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestFinderLaunchOpensTheWindow starts `easel -psn_0_4242` (what macOS's Finder passes on the
// first launch of a downloaded app) under Xvfb with a fresh settings folder: it must open its
// window (the first-run window, no model being set up) and not exit 2 as an unknown command.
func TestFinderLaunchOpensTheWindow(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("runs under Xvfb on Linux; a Mac opens a real window (make mac-check does not)")
	}
	xvfb, err := exec.LookPath("xvfb-run")
	if err != nil {
		if os.Getenv("EASEL_REQUIRE_EMULATOR") != "" {
			t.Fatal("xvfb-run is missing and make test does not skip: run `bash tools/deps.sh test` (installs xvfb)")
		}
		t.Skip("xvfb-run is missing: apt-get install xvfb")
	}
	// A hang guard, not a timing claim: the window normally comes up in a few seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, xvfb, "-a", "-s", "-screen 0 1280x800x24", os.Args[0], "-psn_0_4242")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", ui.QuitWhenShownEnv+"=1", "HOME="+home,
		"XDG_CONFIG_HOME="+home+"/config", "XDG_DATA_HOME="+home+"/data", "XDG_CACHE_HOME="+home+"/cache")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		t.Fatalf("easel -psn_0_4242 exited 2 (taken for a command):\n%s", stderr.String())
	case err != nil:
		t.Fatalf("easel -psn_0_4242: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "easel: window shown: Easel") {
		t.Fatalf("no window came up; output:\n%s", stderr.String())
	}
	if testing.Verbose() {
		t.Logf("%s", stderr.String())
	}
}
