package settings

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// DataDir is where Easel keeps what it makes for the artist: on macOS the app-support folder
// (~/Library/Application Support/Easel, the same as Dir); on Linux and other systems the XDG
// data folder, $XDG_DATA_HOME/Easel, or ~/.local/share/Easel when $XDG_DATA_HOME is unset or not
// an absolute path (as the XDG Base Directory specification says to treat it).
func DataDir() (string, error) {
	if runtime.GOOS == "darwin" {
		return Dir()
	}
	if x := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "Easel"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot find the data folder: %w (set $HOME or $XDG_DATA_HOME)", err)
	}
	return filepath.Join(home, ".local", "share", "Easel"), nil
}

// ImagesDir is the default output folder, which is also the history the window lists: the
// Images subfolder of DataDir.
func ImagesDir() (string, error) {
	dir, err := DataDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "Images"), nil
}

// LoRADir is the LoRA folder: the LoRAs subfolder of the app-support folder (Dir). LoRAs added
// to the window are looked up there (and beside an image) when an image is restored.
func LoRADir() (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "LoRAs"), nil
}

// UpscalersDir is the folder of learned upscalers (.pth and .safetensors files): the Upscalers
// subfolder of DataDir, where an artist can also put files by hand.
func UpscalersDir() (string, error) {
	dir, err := DataDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "Upscalers"), nil
}
