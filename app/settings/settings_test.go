package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMissingFileGivesDefaults(t *testing.T) {
	st := &Store{Path: filepath.Join(t.TempDir(), "settings.json")}
	s, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	if s != Defaults() {
		t.Fatalf("got %+v, want the defaults", s)
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	st := &Store{Path: filepath.Join(t.TempDir(), "nested", "settings.json")}
	s := Defaults()
	s.Model = "/Users/ana/Models/qwen-image-2.1.cmf"
	s.Backend = BackendCPU
	s.Width, s.Height, s.Steps, s.CFG = 1344, 768, 30, 4
	s.OutputFolder = "/Users/ana/Pictures/Easel output"
	if err := st.Save(s); err != nil {
		t.Fatal(err)
	}
	got, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got != s {
		t.Fatalf("round trip: got %+v, want %+v", got, s)
	}
	entries, _ := os.ReadDir(filepath.Dir(st.Path))
	if len(entries) != 1 {
		t.Errorf("the folder holds %d entries; a temporary file was left behind", len(entries))
	}
}

func TestPartialFileKeepsDefaultsForMissingKeys(t *testing.T) {
	st := &Store{Path: filepath.Join(t.TempDir(), "settings.json")}
	if err := os.WriteFile(st.Path, []byte(`{"steps": 8}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	want := Defaults()
	want.Steps = 8
	if s != want {
		t.Fatalf("got %+v, want %+v", s, want)
	}
}

func TestBadFilesAreReportedNotReplaced(t *testing.T) {
	for name, body := range map[string]string{
		"not json":     `{"steps": `,
		"bad backend":  `{"backend": "cuda"}`,
		"bad preview":  `{"preview": "blurry"}`,
		"odd size":     `{"width": 1000}`,
		"zero steps":   `{"steps": 0}`,
		"huge cfg":     `{"cfg": 99}`,
		"empty folder": `{"output_folder": ""}`,
	} {
		t.Run(name, func(t *testing.T) {
			st := &Store{Path: filepath.Join(t.TempDir(), "settings.json")}
			if err := os.WriteFile(st.Path, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := st.Load()
			if err == nil || !strings.Contains(err.Error(), st.Path) {
				t.Fatalf("want an error naming the file, got %v", err)
			}
			if s != Defaults() {
				t.Errorf("a bad file should load as the defaults for this run, got %+v", s)
			}
			b, _ := os.ReadFile(st.Path)
			if string(b) != body {
				t.Error("the bad file was modified; it must be left for the user to inspect")
			}
		})
	}
}

func TestSaveRefusesInvalidSettings(t *testing.T) {
	st := &Store{Path: filepath.Join(t.TempDir(), "settings.json")}
	s := Defaults()
	s.Width = 100
	if err := st.Save(s); err == nil {
		t.Fatal("saved an invalid size")
	}
	if _, err := os.Stat(st.Path); !os.IsNotExist(err) {
		t.Error("an invalid save left a file")
	}
}

func TestWriteFileAtomicIntoUnwritableFolderLeavesNothing(t *testing.T) {
	if os.Getuid() == 0 {
		// root ignores permission bits; use a path under a regular file instead.
		dir := t.TempDir()
		blocker := filepath.Join(dir, "file")
		if err := os.WriteFile(blocker, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := WriteFileAtomic(filepath.Join(blocker, "settings.json"), []byte("{}")); err == nil {
			t.Fatal("writing under a regular file succeeded")
		}
		return
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	err := WriteFileAtomic(filepath.Join(dir, "settings.json"), []byte("{}"))
	if err == nil {
		t.Fatal("wrote into a read-only folder")
	}
}
