package desktop

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
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

// TestTrashOnMacUsesTheFindersTrash: on macOS the file goes through the Finder's Trash
// (Opener.TrashItem, NSFileManager there), Trashed records the place the system answered, and
// Restore puts the file back from that place; a refusal leaves the file and says so.
func TestTrashOnMacUsesTheFindersTrash(t *testing.T) {
	dir, trash := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "easel-3.png")
	if err := os.WriteFile(path, []byte("png"), 0o644); err != nil {
		t.Fatal(err)
	}
	var asked []string
	o := &Opener{GOOS: "darwin", TrashItem: func(p string) (string, error) {
		asked = append(asked, p)
		to := filepath.Join(trash, "easel-3 10.41.07.png") // a name the system picked
		return to, os.Rename(p, to)
	}}
	tr, err := o.Trash(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != path || tr.InTrash != filepath.Join(trash, "easel-3 10.41.07.png") || tr.Original != path {
		t.Fatalf("asked %q, trashed %+v", asked, tr)
	}
	if err := tr.Restore(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "png" {
		t.Fatalf("put back: %q, %v", b, err)
	}

	o.TrashItem = func(string) (string, error) {
		return "", errors.New("“easel-3.png” couldn’t be moved to the trash")
	}
	if _, err := o.Trash(path); err == nil || !strings.Contains(err.Error(), "the file is where it was") {
		t.Fatalf("a refused trash: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the refused file moved: %v", err)
	}
	o.TrashItem = nil
	if _, err := o.Trash(path); err == nil || !strings.Contains(err.Error(), "delete it in the Finder") {
		t.Fatalf("no Finder: %v", err)
	}
}

// TestTrashFromAnotherVolumeUsesThatVolumesTrash: a file that cannot be renamed into the home
// Trash (another file system) goes to $topdir/.Trash-$uid on its own volume, with a .trashinfo
// whose path is relative to that top; Restore puts it back.
func TestTrashFromAnotherVolumeUsesThatVolumesTrash(t *testing.T) {
	const shm = "/dev/shm"
	home := t.TempDir()
	t.Setenv("XDG_DATA_HOME", home)
	hd, herr := deviceOf(home)
	sd, serr := deviceOf(shm)
	if herr != nil || serr != nil || hd == sd {
		t.Skipf("no second file system to trash from (%s: %v, %v)", shm, herr, serr)
	}
	volTrash := filepath.Join(shm, ".Trash-"+strconv.Itoa(os.Getuid()))
	if _, err := os.Lstat(volTrash); err == nil {
		t.Skipf("%s exists already; not touching another program's Trash", volTrash)
	}
	t.Cleanup(func() { os.RemoveAll(volTrash) })
	dir, err := os.MkdirTemp(shm, "easel-trash-test-")
	if err != nil {
		t.Skipf("cannot write to %s: %v", shm, err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "easel-9.png")
	if err := os.WriteFile(path, []byte("png"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := (&Opener{GOOS: "linux"}).Trash(path)
	if err != nil {
		t.Fatal(err)
	}
	if tr.InTrash != filepath.Join(volTrash, "files", "easel-9.png") {
		t.Fatalf("trashed to %s, want the volume's Trash %s", tr.InTrash, volTrash)
	}
	info, err := os.ReadFile(filepath.Join(volTrash, "info", "easel-9.png.trashinfo"))
	rel, _ := filepath.Rel(shm, path)
	if err != nil || !strings.Contains(string(info), "\nPath="+rel+"\n") {
		t.Fatalf("trashinfo %q (%v), want Path=%s", info, err, rel)
	}
	if err := tr.Restore(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "png" {
		t.Fatalf("put back: %q, %v", b, err)
	}
}
