package cli

import (
	"fmt"
	"os"
	"runtime"
	"testing"
)

// TestMain points the app-support folder at an empty temporary one, so that no test reads the
// developer's own settings (generate takes its default backend from them).
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		// The test binary as the easel command (a test that kills a real process runs it so).
		os.Exit(Run(os.Args[1:], os.Stdout, os.Stderr))
	}
	dir, err := os.MkdirTemp("", "easel-cli-test-config-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "cli tests: making a temporary settings folder: %v\n", err)
		os.Exit(1)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	if runtime.GOOS == "darwin" {
		os.Setenv("HOME", dir) // os.UserConfigDir is $HOME/Library/Application Support there
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
