package remote

import (
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/test"

	"easel/app/compose"
	"easel/app/jobs"
	"easel/app/settings"
	"easel/engine/cmf"
	"easel/ui/model"
)

// aloneShell is a Shell with no window behind it: settings kept in memory, calls run at once,
// what was shown and said recorded.
type aloneShell struct {
	settings settings.Settings
	kept     int
	shown    []dialog.Dialog
	model    *model.Window
}

func newAlone(t *testing.T) (*Work, *aloneShell) {
	t.Helper()
	a := test.NewTempApp(t)
	as := &aloneShell{settings: settings.Defaults(), model: model.New(compose.Draft{})}
	w := NewWork(Shell{
		Window: a.NewWindow("alone"), Show: func(d dialog.Dialog) { as.shown = append(as.shown, d) },
		Model: as.model, Do: func(f func()) { f() },
		Settings:     func() settings.Settings { return as.settings },
		KeepSettings: func(ns settings.Settings) error { as.settings = ns; as.kept++; return nil },
		QueueChanged: func() {}, Submit: func(compose.Draft, uint64) bool { return true },
		Frame:             func(img image.Image, _ bool) image.Image { return img },
		ShowStudioPicture: func(image.Image, int, int, string) {}, Progress: func(string) {},
		Machine:  "this Mac",
		RowLabel: func(p string, seed uint64) (string, string) { return p + " ·", fmt.Sprintf("seed %d", seed) },
	}, &Router{Local: jobs.GeneratorFunc(nil)})
	return w, as
}

// Built alone, remote work's indicator says where jobs render: another machine named in Render on,
// and nothing (hidden) once it is this Mac again.
func TestRemoteWorkIndicatorFollowsRenderOn(t *testing.T) {
	w, as := newAlone(t)
	ns := as.settings
	ns.RenderOn = "192.0.2.7:7860"
	w.ApplyNetwork(ns)
	if !w.Network.Visible() || w.Network.Text != "Rendering on 192.0.2.7:7860" || w.Router.Where() != "192.0.2.7:7860" {
		t.Fatalf("rendering elsewhere: visible %v, %q, router %q", w.Network.Visible(), w.Network.Text, w.Router.Where())
	}
	ns.RenderOn = ""
	w.ApplyNetwork(ns)
	if w.Network.Visible() || w.Router.Where() != "" {
		t.Errorf("rendering here: the indicator still says %q", w.Network.Text)
	}
}

// Lending with no model chosen is refused before anything is dialled, with what to do, and the box
// stays unticked; nothing is remembered as lent.
func TestLendingWithoutAModelSaysWhatToDo(t *testing.T) {
	w, as := newAlone(t)
	as.settings.Model = ""
	l := w.Lend()
	l.URL.SetText("nats://127.0.0.1:9")
	test.Tap(l.Check)
	if l.Check.Checked || l.Session() != nil || !strings.HasPrefix(l.Err.Text, "choose a model in Settings first") {
		t.Fatalf("lending without a model: ticked %v, lent %v, %q", l.Check.Checked, l.Session() != nil, l.Err.Text)
	}
	if as.settings.Studio.Lend {
		t.Error("a refused lending was remembered as on")
	}
}

// A model file that cannot be lent is said in the artist's words: a damaged copy says to copy it
// again, a missing one to check it is there; neither shows the reader's codes.
func TestLendRefusalInPlainWords(t *testing.T) {
	damaged := &cmf.Error{Kind: cmf.ErrHash, Path: "/models/q.cmf", Tensor: "blocks.3.w", Detail: "content does not match its hash (recorded 0badc0de, computed 12345678)"}
	missing := filepath.Join(t.TempDir(), "gone.cmf")
	_, statErr := os.Stat(missing)
	for _, tc := range []struct {
		err        error
		want, nope string
	}{
		{fmt.Errorf("this model cannot join the studio: %w", damaged), "the model file q.cmf is damaged", "0badc0de"},
		{fmt.Errorf("model file %s cannot be read: %w", missing, statErr), "the model file gone.cmf cannot be read", "no such file"},
		{errors.New("the cache is odd"), "could not be checked (the cache is odd)", "%!"},
	} {
		model := "/models/q.cmf"
		if errors.Is(tc.err, os.ErrNotExist) {
			model = missing
		}
		got := PlainLendRefusal(tc.err, model)
		if !strings.HasPrefix(got, "This Mac cannot lend: ") || !strings.Contains(got, tc.want) || strings.Contains(got, tc.nope) || !strings.Contains(strings.ToLower(got), "lend this mac again") {
			t.Errorf("%v\n  said %q, want %q and what to do", tc.err, got, tc.want)
		}
	}
}
