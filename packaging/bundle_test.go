package packaging

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"easel/app"
)

// moduleRoot is the repository root (this package lives one level below it).
func moduleRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}

// TestDarwinBundleFromStandIn assembles Easel.app exactly as `make app` does on a Mac, but from a
// stand-in darwin/arm64 executable (the real one needs Apple's SDK), then finishes and checks it.
// The packaging runs on a copy of FyneApp.toml, so the build number fyne writes back never touches
// the work tree.
func TestDarwinBundleFromStandIn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fyne CLI and a darwin executable")
	}
	root := moduleRoot(t)
	before, err := os.ReadFile(filepath.Join(root, "FyneApp.toml"))
	must(t, err)
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	must(t, os.MkdirAll(filepath.Join(src, "assets"), 0o755))
	copyFile(t, filepath.Join(root, "FyneApp.toml"), filepath.Join(src, "FyneApp.toml"))
	copyFile(t, filepath.Join(root, "assets", "icon.png"), filepath.Join(src, "assets", "icon.png"))
	// fyne package wants Go code in its source folder even when given --exe.
	must(t, os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() { println(\"Easel stand-in\") }\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(src, "go.mod"), []byte("module easel\n\ngo 1.26\n"), 0o644))

	exe := filepath.Join(tmp, "easel")
	run(t, src, []string{"GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0"}, "go", "build", "-o", exe, ".")
	fyne := strings.TrimSpace(run(t, root, nil, "go", "tool", "-n", "fyne"))
	if strings.Contains(fyne, "\n") || !filepath.IsAbs(fyne) {
		t.Fatalf("go tool -n fyne printed %q, want the absolute path of the fyne executable", fyne)
	}
	out := filepath.Join(tmp, "out")
	must(t, os.MkdirAll(out, 0o755))
	run(t, out, nil, fyne, "package", "-os", "darwin", "--src", src, "--exe", exe)

	bundle := filepath.Join(out, app.Name+".app")
	if err := CheckBundle(bundle, app.ID, app.Version); err == nil {
		t.Fatal("the unfinished bundle passed the check; fyne's default plist should fail it (minimum macOS 10.11)")
	}
	must(t, FinishInfoPlist(bundle))
	must(t, FinishInfoPlist(bundle)) // idempotent
	if err := CheckBundle(bundle, app.ID, app.Version); err != nil {
		t.Fatal(err)
	}
	plist, _ := os.ReadFile(filepath.Join(bundle, "Contents", "Info.plist"))
	if n := strings.Count(string(plist), "<key>CFBundleDocumentTypes</key>"); n != 1 {
		t.Errorf("CFBundleDocumentTypes appears %d times", n)
	}
	// fyne bumped the build number in the copy, never in the work tree.
	after, err := os.ReadFile(filepath.Join(root, "FyneApp.toml"))
	must(t, err)
	if string(after) != string(before) {
		t.Error("packaging modified the work tree's FyneApp.toml")
	}
	copied, _ := os.ReadFile(filepath.Join(src, "FyneApp.toml"))
	if string(copied) == string(before) {
		t.Error("fyne did not write its build number into the copy; the isolation above may be unnecessary or broken")
	}
}

func TestCheckBundleNamesEveryProblem(t *testing.T) {
	app := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(app, "Contents"), 0o755))
	must(t, os.WriteFile(filepath.Join(app, "Contents", "Info.plist"), []byte("<plist><dict>\n<key>CFBundleExecutable</key>\n<string>easel</string>\n</dict></plist>\n"), 0o644))
	err := CheckBundle(app, "app.easel.Easel", "0.1.0")
	if err == nil {
		t.Fatal("an empty bundle passed")
	}
	for _, want := range []string{"CFBundleIdentifier", "LSMinimumSystemVersion", "NSHighResolutionCapable", "Contents/MacOS/easel", "icon", "cmf"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not mention %s:\n%v", want, err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	must(t, err)
	must(t, os.WriteFile(to, b, 0o644))
}

// run runs a command and returns its standard output only: the go command reports progress such
// as "go: downloading …" on standard error (on a cold module cache), and that must never become
// part of a path the test goes on to execute. Standard error is shown when the command fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, out, stderr.Bytes())
	}
	if stderr.Len() > 0 {
		t.Logf("%s %s wrote to stderr:\n%s", name, strings.Join(args, " "), stderr.Bytes())
	}
	return string(out)
}
