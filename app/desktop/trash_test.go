package desktop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Trash moves a file into the freedesktop Trash with its .trashinfo, under a free name when one
// of that name is there already; Restore puts it back.
func TestTrashAndRestore(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	dir := t.TempDir()
	o := &Opener{GOOS: "linux"}
	var moved []Trashed
	for range 2 {
		path := filepath.Join(dir, "easel-7.png")
		if err := os.WriteFile(path, []byte("png"), 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := o.Trash(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("%s is still there", path)
		}
		moved = append(moved, tr)
	}
	if moved[0].InTrash == moved[1].InTrash || filepath.Dir(moved[0].InTrash) != filepath.Join(data, "Trash", "files") {
		t.Fatalf("trashed to %s and %s", moved[0].InTrash, moved[1].InTrash)
	}
	info, err := os.ReadFile(filepath.Join(data, "Trash", "info", filepath.Base(moved[1].InTrash)+".trashinfo"))
	if err != nil || !strings.Contains(string(info), "Path="+filepath.Join(dir, "easel-7.png")) {
		t.Fatalf("trashinfo %q (%v)", info, err)
	}
	if err := moved[1].Restore(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "easel-7.png")); err != nil || string(b) != "png" {
		t.Fatalf("put back: %q, %v", b, err)
	}
	if err := moved[0].Restore(); err == nil || !strings.Contains(err.Error(), "is there now") {
		t.Errorf("putting back over a file: %v", err)
	}
}
