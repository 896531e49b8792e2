package savedimage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"easel/app/desktop"
	"easel/app/history"
	"easel/app/imagefile"
)

// fakeShell is a Shell over a Linux desktop with xclip and no xdg-open: the commands it would
// run, the notices, and the actions asked of the shell are recorded.
type fakeShell struct {
	calls   chan func()
	ran     chan desktop.Command
	said    []string
	asked   []string // "refine <path>", "continue <path>", "useall <path>"...
	changed int
}

func newFake() (*fakeShell, Shell) {
	f := &fakeShell{calls: make(chan func(), 16), ran: make(chan desktop.Command, 16)}
	entry := func(what string) func(history.Entry) {
		return func(e history.Entry) { f.asked = append(f.asked, what+" "+e.Path) }
	}
	sh := Shell{
		Do:  func(fn func()) { f.calls <- fn },
		Say: func(format string, args ...any) { f.said = append(f.said, fmtSay(format, args...)) },
		Desktop: &desktop.Opener{GOOS: "linux",
			LookPath: func(name string) (string, error) {
				if name == "xclip" {
					return "/usr/bin/xclip", nil
				}
				return "", os.ErrNotExist
			},
			Run: func(c desktop.Command, _ bool) error { f.ran <- c; return nil }},
		Refine:       func(path string) { f.asked = append(f.asked, "refine "+path) },
		ContinueFrom: func(path string) { f.asked = append(f.asked, "continue "+path) },
		Changed:      func() { f.changed++ },
		UseAll:       entry("useall"), UsePrompt: entry("useprompt"), UseSeed: entry("useseed"),
		Vary: entry("vary"), Trash: entry("trash"),
		Upscales: func(e history.Entry) []*fyne.MenuItem {
			return []*fyne.MenuItem{fyne.NewMenuItem("Upscale", nil)}
		},
	}
	return f, sh
}

// next runs the next call the region put on the UI goroutine (bounded: a busy machine is slow).
func (f *fakeShell) next(t *testing.T) {
	t.Helper()
	select {
	case fn := <-f.calls:
		fn()
	case <-time.After(30 * time.Second):
		t.Fatal("the region never came back to the UI goroutine")
	}
}

func fmtSay(format string, args ...any) string {
	return strings.TrimSpace(strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " "))
}

// The buttons are off until a saved file is shown, act on the shown file, and Continue from this
// shows only while the edit's result is the file shown.
func TestButtonsFollowTheShownFile(t *testing.T) {
	test.NewTempApp(t)
	f, sh := newFake()
	a := New(sh)
	for _, b := range []fyne.Disableable{a.Reveal, a.Copy, a.Refine} {
		if !b.Disabled() {
			t.Fatal("a button over the canvas is on with no saved image shown")
		}
	}
	if a.Continue.Visible() || f.changed != 0 {
		t.Fatalf("Continue from this shown (%v) or the shell told of a change (%d) before anything was shown", a.Continue.Visible(), f.changed)
	}
	if a.Reveal.Text != "Show in folder" {
		t.Errorf("the reveal button says %q on Linux", a.Reveal.Text)
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "heron.png")
	if err := os.WriteFile(path, []byte("png"), 0o644); err != nil {
		t.Fatal(err)
	}
	a.Show(path)
	if a.Shown() != path || a.Reveal.Disabled() || a.Copy.Disabled() || a.Refine.Disabled() || f.changed != 1 {
		t.Fatalf("showing %s: shown %q, buttons off %v/%v/%v, changes told %d", path, a.Shown(), a.Reveal.Disabled(), a.Copy.Disabled(), a.Refine.Disabled(), f.changed)
	}
	if a.Continue.Visible() {
		t.Error("Continue from this shows for an image that is not an edit's result")
	}
	test.Tap(a.Refine)
	if len(f.asked) != 1 || f.asked[0] != "refine "+path {
		t.Errorf("Refine this asked %v", f.asked)
	}

	test.Tap(a.Copy)
	if c := <-f.ran; c.Name != "xclip" || c.Args[len(c.Args)-1] != path {
		t.Errorf("Copy image ran %v, want xclip on %s", c, path)
	}
	f.next(t)
	if len(f.said) != 1 || f.said[0] != "Copied heron.png to the clipboard." {
		t.Errorf("after copying the window says %q", f.said)
	}

	test.Tap(a.Reveal) // no xdg-open: a notice says what to install and where the file is
	f.next(t)
	if len(f.said) != 2 || !strings.Contains(f.said[1], "xdg-utils") || !strings.Contains(f.said[1], dir) {
		t.Errorf("revealing without xdg-open says %q", f.said)
	}
	select {
	case c := <-f.ran:
		t.Errorf("ran %v although xdg-open is missing", c)
	default:
	}

	a.Edited(path)
	if !a.Continue.Visible() {
		t.Fatal("Continue from this is hidden while the edit's result is shown")
	}
	test.Tap(a.Continue)
	if f.asked[len(f.asked)-1] != "continue "+path {
		t.Errorf("Continue from this asked %v", f.asked)
	}
	a.Show("")
	if a.Continue.Visible() || !a.Copy.Disabled() || a.Shown() != "" {
		t.Error("with no saved file shown, Continue from this still shows or Copy image is on")
	}
}

// The history's menu names the image, then its recipe, the actions that rework it, the shell's
// own items and the file's; a grid's picture offers no rework, an API job's says whom it was for.
func TestHistoryMenu(t *testing.T) {
	test.NewTempApp(t)
	f, sh := newFake()
	a := New(sh)
	e := history.Entry{Path: "/pictures/heron.png", Settings: &imagefile.Settings{Prompt: "a heron", Width: 64, Height: 64, Steps: 3, Seed: 4}}
	labels := func(m *fyne.Menu) []string {
		var out []string
		for _, it := range m.Items {
			if !it.IsSeparator {
				out = append(out, it.Label)
			}
		}
		return out
	}
	got := labels(a.Menu(e))
	want := []string{"Use All (restore the recipe)", "Use Prompt", "Use Seed", "Refine this", "Vary", "Upscale", "Show in folder", "Copy image", "Move to Trash"}
	if len(got) != len(want)+1 || !strings.Contains(got[0], "64×64") {
		t.Fatalf("menu %q: want the image's description, then %q", got, want)
	}
	for i, w := range want {
		if got[i+1] != w {
			t.Errorf("item %d is %q, want %q", i+1, got[i+1], w)
		}
	}
	for _, it := range a.Menu(e).Items {
		if it.Action != nil && (it.Label == "Use All (restore the recipe)" || it.Label == "Vary" || it.Label == "Move to Trash") {
			it.Action()
		}
	}
	if strings.Join(f.asked, ",") != "useall /pictures/heron.png,vary /pictures/heron.png,trash /pictures/heron.png" {
		t.Errorf("the menu's items asked %v", f.asked)
	}

	grid := e
	grid.Settings = &imagefile.Settings{Prompt: "a heron", Origin: "API 127.0.0.1", Grid: &imagefile.GridSettings{}}
	got = labels(a.Menu(grid))
	if got[0] != "Made for API 127.0.0.1" {
		t.Errorf("an API job's menu starts %q", got[0])
	}
	for _, l := range got {
		if l == "Refine this" || l == "Vary" || l == "Upscale" {
			t.Errorf("a grid's menu offers %q", l)
		}
	}
}
