package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/BurntSushi/toml"
)

// FyneApp.toml (read by `fyne package`) and the constants the binary prints must agree.
func TestFyneAppTomlMatchesConstants(t *testing.T) {
	var meta struct {
		Details struct {
			Name, ID, Version, Icon string
		}
	}
	if _, err := toml.DecodeFile(filepath.Join("..", "FyneApp.toml"), &meta); err != nil {
		t.Fatal(err)
	}
	d := meta.Details
	if d.Name != Name || d.ID != ID || d.Version != Version {
		t.Errorf("FyneApp.toml says %s %s %s; the code says %s %s %s", d.Name, d.ID, d.Version, Name, ID, Version)
	}
	if _, err := os.Stat(filepath.Join("..", d.Icon)); err != nil {
		t.Errorf("FyneApp.toml names icon %q: %v", d.Icon, err)
	}
}
