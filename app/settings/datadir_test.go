package settings

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// The images folder follows each system's convention: the app-support folder on macOS, the XDG
// data folder on Linux (with its default when $XDG_DATA_HOME is unset or relative); it is the
// default output folder.
func TestImagesDirFollowsThePlatform(t *testing.T) {
	home := t.TempDir()
	xdg := filepath.Join(t.TempDir(), "data")
	t.Setenv("HOME", home)
	for _, tc := range []struct {
		name, xdgDataHome, linux string
	}{
		{"XDG_DATA_HOME set", xdg, filepath.Join(xdg, "Easel", "Images")},
		{"XDG_DATA_HOME unset", "", filepath.Join(home, ".local", "share", "Easel", "Images")},
		{"XDG_DATA_HOME relative", "data", filepath.Join(home, ".local", "share", "Easel", "Images")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_DATA_HOME", tc.xdgDataHome)
			want := tc.linux
			if runtime.GOOS == "darwin" {
				cfg, err := os.UserConfigDir()
				if err != nil {
					t.Fatal(err)
				}
				want = filepath.Join(cfg, "Easel", "Images")
			}
			got, err := ImagesDir()
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("ImagesDir() = %s, want %s", got, want)
			}
			if d := Defaults().OutputFolder; d != want {
				t.Errorf("default output folder %s, want %s", d, want)
			}
		})
	}
}
