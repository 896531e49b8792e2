package darwincheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeModule lays out a throwaway module with the given files.
func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module probe\n\ngo 1.26\n"
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReportsTypeErrorInDarwinFileWithFileAndLine(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"p/p.go": "package p\n\nfunc Shared() int { return 1 }\n",
		// Only compiled for darwin: a Linux `go build` never sees this mistake.
		"p/gpu_darwin.go": "package p\n\nfunc Budget() uint64 {\n\tvar n int = Shared()\n\treturn n\n}\n",
		// A cgo file: C.xxx must be accepted without a C compiler.
		"p/shim_darwin.go": "package p\n\n/*\nstatic int one(void) { return 1; }\n*/\nimport \"C\"\n\nfunc One() int { return int(C.one()) }\n",
	})
	rep, err := Check(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) != 1 {
		t.Fatalf("want exactly one error, got %d: %q", len(rep.Errors), rep.Errors)
	}
	got := rep.Errors[0]
	want := filepath.Join(dir, "p", "gpu_darwin.go") + ":5:9:"
	if !strings.HasPrefix(got, want) || !strings.Contains(got, "cannot use n") {
		t.Fatalf("error %q does not name %s with the mismatch", got, want)
	}
	if rep.Packages < 2 {
		t.Fatalf("checked %d packages; the standard library should have been checked too", rep.Packages)
	}
}

func TestCleanDarwinPackagePasses(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"p/p_darwin.go": "package p\n\nimport \"runtime\"\n\nfunc OS() string { return runtime.GOOS }\n",
		"p/p_linux.go":  "package p\n\nfunc OS() string { return undefinedOnLinuxOnly }\n",
	})
	rep, err := Check(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) != 0 {
		t.Fatalf("darwin build of a clean package reported %q (the linux-only file must be excluded)", rep.Errors)
	}
}
