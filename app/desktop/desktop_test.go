package desktop

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRevealCommand(t *testing.T) {
	for _, tc := range []struct {
		goos, path string
		want       Command
		label      string
	}{
		{"darwin", "/Users/ana/Library/Application Support/Easel/Images/a.png", Command{Name: "open", Args: []string{"-R", "/Users/ana/Library/Application Support/Easel/Images/a.png"}}, "Show in Finder"},
		{"linux", "/home/ana/.local/share/Easel/Images/a.png", Command{Name: "xdg-open", Args: []string{"/home/ana/.local/share/Easel/Images"}}, "Show in folder"},
	} {
		got, err := RevealCommand(tc.goos, tc.path)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.goos, got, err, tc.want)
		}
		if l := RevealLabel(tc.goos); l != tc.label {
			t.Errorf("%s: label %q, want %q", tc.goos, l, tc.label)
		}
	}
	if _, err := RevealCommand("windows", `C:\x\a.png`); err == nil || !strings.Contains(err.Error(), "yourself") {
		t.Errorf("windows: %v, want an error saying to open the folder", err)
	}
}

func TestCopyImageCommands(t *testing.T) {
	mac, err := CopyImageCommands("darwin", `/Users/ana/my "best" \ image.png`, false)
	want := `set the clipboard to (read (POSIX file "/Users/ana/my \"best\" \\ image.png") as «class PNGf»)`
	if err != nil || len(mac) != 1 || mac[0].Name != "osascript" || !reflect.DeepEqual(mac[0].Args, []string{"-e", want}) {
		t.Errorf("darwin: %v, %v; want osascript -e %s", mac, err, want)
	}
	wl := Command{Name: "wl-copy", Args: []string{"--type", "image/png"}, Stdin: "/tmp/a.png"}
	x := Command{Name: "xclip", Args: []string{"-selection", "clipboard", "-t", "image/png", "-i", "/tmp/a.png"}}
	if got, _ := CopyImageCommands("linux", "/tmp/a.png", true); !reflect.DeepEqual(got, []Command{wl, x}) {
		t.Errorf("linux on Wayland: %v, want wl-copy first", got)
	}
	if got, _ := CopyImageCommands("linux", "/tmp/a.png", false); !reflect.DeepEqual(got, []Command{x, wl}) {
		t.Errorf("linux on X11: %v, want xclip first", got)
	}
	if s := wl.String(); s != "wl-copy --type image/png < /tmp/a.png" {
		t.Errorf("String() = %q", s)
	}
}

// fake is an Opener whose installed programs are listed and whose runs are recorded.
func fake(goos string, wayland bool, installed ...string) (*Opener, *[]Command) {
	var ran []Command
	return &Opener{GOOS: goos, Wayland: wayland,
		LookPath: func(name string) (string, error) {
			for _, n := range installed {
				if n == name {
					return "/usr/bin/" + n, nil
				}
			}
			return "", errors.New("not found")
		},
		Run: func(c Command, wait bool) error { ran = append(ran, c); return nil },
	}, &ran
}

// The first installed tool runs; with none, the message names what to install and nothing runs.
func TestOpenerPicksAnInstalledToolOrSaysWhatToInstall(t *testing.T) {
	img := filepath.Join(t.TempDir(), "a.png")
	if err := os.WriteFile(img, []byte("\x89PNG"), 0o644); err != nil {
		t.Fatal(err)
	}

	o, ran := fake("linux", true, "xclip")
	if err := o.CopyImage(img); err != nil || len(*ran) != 1 || (*ran)[0].Name != "xclip" {
		t.Errorf("only xclip installed: err %v, ran %v", err, *ran)
	}

	o, ran = fake("linux", false)
	err := o.CopyImage(img)
	if !errors.Is(err, ErrMissingTool) || !strings.Contains(err.Error(), "install xclip (X11: package xclip) or wl-copy (Wayland: package wl-clipboard)") || len(*ran) != 0 {
		t.Errorf("no clipboard tool: %v (ran %v)", err, *ran)
	}
	err = o.Reveal(img)
	if !errors.Is(err, ErrMissingTool) || !strings.Contains(err.Error(), "xdg-open (package xdg-utils)") || !strings.Contains(err.Error(), filepath.Dir(img)) {
		t.Errorf("no xdg-open: %v", err)
	}

	o, ran = fake("darwin", false, "open", "osascript")
	if err := o.Reveal(img); err != nil || (*ran)[0].String() != "open -R "+img {
		t.Errorf("darwin reveal: %v, ran %v", err, *ran)
	}
	if err := o.CopyImage(filepath.Join(t.TempDir(), "gone.png")); err == nil || !strings.Contains(err.Error(), "moved or deleted") {
		t.Errorf("copying a missing file: %v", err)
	}
}

// runCommand feeds the named file on standard input and reports a failing program.
func TestRunCommand(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	if err := os.WriteFile(in, []byte("pixels"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	if err := runCommand(Command{Name: "/bin/sh", Args: []string{"-c", "cat > " + out}, Stdin: in}, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "pixels" {
		t.Errorf("the command read %q from standard input, want the file", b)
	}
	if err := runCommand(Command{Name: "/bin/sh", Args: []string{"-c", "exit 3"}}, true); err == nil {
		t.Error("a failing command reported no error")
	}
}
