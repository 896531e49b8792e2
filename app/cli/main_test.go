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
