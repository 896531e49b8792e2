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
	if n := strings.Count(string(plist), "<key>NSLocalNetworkUsageDescription</key>"); n != 1 {
		t.Errorf("NSLocalNetworkUsageDescription appears %d times", n)
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
	for _, want := range []string{"CFBundleIdentifier", "LSMinimumSystemVersion", "NSHighResolutionCapable", "Contents/MacOS/easel", "icon", "NSLocalNetworkUsageDescription"} {
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

// TestCheckBundleRequiresLocalNetworkUsage: a bundle finished in every other way fails the check
// without NSLocalNetworkUsageDescription, and with a document type Easel does not open.
func TestCheckBundleRequiresLocalNetworkUsage(t *testing.T) {
	app := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(app, "Contents", "MacOS"), 0o755))
	must(t, os.MkdirAll(filepath.Join(app, "Contents", "Resources"), 0o755))
	must(t, os.WriteFile(filepath.Join(app, "Contents", "MacOS", "easel"), []byte("#!/bin/sh\n"), 0o755))
	must(t, os.WriteFile(filepath.Join(app, "Contents", "Resources", "icon.icns"), []byte("icns"), 0o644))
	plist := "<plist><dict>\n<key>CFBundleExecutable</key>\n<string>easel</string>\n<key>CFBundleIconFile</key>\n<string>icon.icns</string>\n" +
		"<key>CFBundleIdentifier</key>\n<string>" + "app.easel.Easel" + "</string>\n<key>CFBundleShortVersionString</key>\n<string>0.1.0</string>\n</dict></plist>\n"
	path := filepath.Join(app, "Contents", "Info.plist")
	must(t, os.WriteFile(path, []byte(plist), 0o644))
	must(t, FinishInfoPlist(app))
	if err := CheckBundle(app, "app.easel.Easel", "0.1.0"); err != nil {
		t.Fatalf("the finished bundle fails: %v", err)
	}
	b, _ := os.ReadFile(path)
	without := strings.Replace(string(b), "<key>NSLocalNetworkUsageDescription</key>", "<key>Removed</key>", 1)
	must(t, os.WriteFile(path, []byte(without), 0o644))
	if err := CheckBundle(app, "app.easel.Easel", "0.1.0"); err == nil || !strings.Contains(err.Error(), "NSLocalNetworkUsageDescription") {
		t.Fatalf("a bundle without NSLocalNetworkUsageDescription: %v", err)
	}
	withDoc := strings.Replace(string(b), "</dict></plist>", "<key>CFBundleDocumentTypes</key><array/></dict></plist>", 1)
	must(t, os.WriteFile(path, []byte(withDoc), 0o644))
	if err := CheckBundle(app, "app.easel.Easel", "0.1.0"); err == nil || !strings.Contains(err.Error(), "CFBundleDocumentTypes") {
		t.Fatalf("a bundle declaring a document type: %v", err)
	}
}

// TestPackageScriptSignsAdHocOnMac runs package.sh darwin as on a Mac, with stand-ins on PATH for
// uname (Darwin), go (fyne package makes an empty Easel.app) and codesign (records its
// arguments), in a copy of the script's folder: the finished bundle must be signed ad hoc and
// verified.
func TestPackageScriptSignsAdHocOnMac(t *testing.T) {
	root := moduleRoot(t)
	tree := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(tree, "packaging"), 0o755))
	copyFile(t, filepath.Join(root, "packaging", "package.sh"), filepath.Join(tree, "packaging", "package.sh"))
	copyFile(t, filepath.Join(root, "FyneApp.toml"), filepath.Join(tree, "FyneApp.toml"))
	bin := filepath.Join(tree, "bin")
	must(t, os.MkdirAll(bin, 0o755))
	calls := filepath.Join(tree, "calls.log")
	stub := func(name, body string) {
		must(t, os.WriteFile(filepath.Join(bin, name), []byte("#!/usr/bin/env bash\n"+body+"\n"), 0o755))
	}
	stub("uname", `echo Darwin`)
	stub("go", `echo "go $*" >> "`+calls+`"; if [ "$1 $2 $3" = "tool fyne package" ]; then mkdir -p Easel.app/Contents; fi`)
	stub("codesign", `echo "codesign $*" >> "`+calls+`"`)
	cmd := exec.Command("bash", filepath.Join(tree, "packaging", "package.sh"), "darwin")
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("package.sh darwin: %v\n%s", err, out)
	}
	log, err := os.ReadFile(calls)
	must(t, err)
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	want := []string{"codesign --force --deep -s - Easel.app", "codesign --verify --deep --strict Easel.app"}
	if len(lines) < 2 || lines[len(lines)-2] != want[0] || lines[len(lines)-1] != want[1] {
		t.Fatalf("package.sh darwin ran:\n%s\nwant it to end with:\n%s", log, strings.Join(want, "\n"))
	}
	if !strings.Contains(string(log), "go run ./tools/macbundle Easel.app") {
		t.Fatalf("the bundle was not finished and checked before signing:\n%s", log)
	}
}
