package upscale

import (
	"image"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"easel/app/compose"
	"easel/app/hires"
	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/settings"
	"easel/app/upscalers"
	"easel/ui/model"
)

// hostAlone is a Host for the upscaling built on its own: the UI calls queue up for the test to
// run, and what the window would show is recorded.
type hostAlone struct {
	calls   chan func()
	stage   string
	saved   []history.Entry
	running []bool
}

func newAlone(t *testing.T, lib *upscalers.Library) (*Upscaling, *model.Window, *hostAlone, *history.Store) {
	test.NewTempApp(t)
	m := model.New(compose.NewDraft(settings.Defaults()))
	store := history.New(t.TempDir())
	h := &hostAlone{calls: make(chan func(), 64)}
	var u *Upscaling
	u = New(m, Host{
		Settings: func() settings.Settings { return settings.Defaults() },
		Library:  func() *upscalers.Library { return lib },
		History:  func() *history.Store { return store },
		Saved:    func(e history.Entry) { h.saved = append(h.saved, e) },
		Stage:    func(text string) { h.stage = text },
		Plan:     func(string) {},
		Running:  func() { h.running = append(h.running, u.Running()) },
		Now:      func() time.Time { return time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC) },
		Do:       func(f func()) { h.calls <- f },
	})
	return u, m, h, store
}

// pump runs the queued UI calls until cond holds.
func (h *hostAlone) pump(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(time.Minute)
	for !cond() {
		select {
		case f := <-h.calls:
			f()
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Built alone, with no learned upscaler chosen: a batch cell's menu offers ×2 and ×4 with
// Lanczos (off until its picture is finished); ×2 runs off the UI goroutine, saves hires.Resize's
// picture with the cell's recipe into the history, says so on the progress line and in the
// model's notice, and is running exactly between its start and its end.
func TestUpscalingAloneLanczosFromACell(t *testing.T) {
	u, m, h, store := newAlone(t, nil)
	waiting := u.CellItems(Source{Label: "Image 1"})
	if len(waiting) != 2 || !waiting[0].Disabled || !waiting[1].Disabled {
		t.Fatalf("a cell not yet finished: %d items (want 2, off)", len(waiting))
	}
	img := image.NewNRGBA(image.Rect(0, 0, 24, 16))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	items := u.CellItems(Source{Label: "Image 1", Image: img, Set: &imagefile.Settings{Prompt: "a kingfisher", Seed: 3}})
	if items[0].Label != "Upscale ×2 with Lanczos" || items[0].Disabled {
		t.Fatalf("first item %q (off %v), want Upscale ×2 with Lanczos, on", items[0].Label, items[0].Disabled)
	}
	items[0].Action()
	if !u.Running() || !strings.HasPrefix(h.stage, "Upscaling Image 1 ×2 with Lanczos") {
		t.Fatalf("after asking: running %v, progress line %q", u.Running(), h.stage)
	}
	items[1].Action() // a second upscale while one runs is refused, saying why
	if n := m.Notice().Text; !strings.Contains(n, "An upscale is running") {
		t.Errorf("a second upscale while one runs: notice %q", n)
	}
	h.pump(t, "the upscale to be saved", func() bool { return !u.Running() })
	if len(h.saved) != 1 || len(store.Session()) != 1 || h.saved[0].Path != store.Session()[0].Path {
		t.Fatalf("saved %d, the history's session holds %d", len(h.saved), len(store.Session()))
	}
	if len(h.running) != 2 || !h.running[0] || h.running[1] {
		t.Errorf("Running heard %v, want [true false]", h.running)
	}
	got, err := readPicture(h.saved[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	if want := hires.Resize(img, 48, 32); got.Rect != want.Rect || string(got.Pix) != string(want.Pix) {
		t.Error("the saved picture is not hires.Resize's ×2")
	}
	md, err := imagefile.ReadFile(h.saved[0].Path)
	if err != nil || md.Settings == nil || md.Settings.Prompt != "a kingfisher" || md.Settings.Upscale == nil || md.Settings.Upscale.Upscaler != "Lanczos" {
		t.Errorf("the PNG records %+v (%v)", md, err)
	}
	if !strings.HasPrefix(h.stage, "Upscaled with Lanczos · saved ") || !strings.Contains(m.Notice().Text, "Image 1 upscaled ×2 with Lanczos to 48×32") {
		t.Errorf("progress line %q, notice %q", h.stage, m.Notice().Text)
	}
	if u.Cancel() {
		t.Error("Cancel found an upscale running after it ended")
	}
}

// Without an upscalers folder, a dropped upscaler is not added and the notice says why.
func TestUpscalingAloneAskAddWithoutAFolder(t *testing.T) {
	u, m, _, _ := newAlone(t, nil)
	u.AskAdd([]upscalers.Entry{{Path: "/tmp/4x-UltraSharp.pth"}})
	if n := m.Notice().Text; !strings.Contains(n, "upscalers folder cannot be found") || !strings.Contains(n, "4x-UltraSharp.pth") {
		t.Errorf("notice %q", n)
	}
}
