package setup

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"easel/app/download"
	"easel/app/download/downloadtest"
	"easel/app/modelsetup"
	"easel/app/settings"
	"easel/engine/convert"
	"easel/internal/golden"
)

const licenseText = "Qwen RESEARCH LICENSE AGREEMENT\n\nFor non-commercial use only.\n"

// harness is a first-run window on the test driver, with its own app-support folder and a fake
// hub on loopback serving the tiny model.
type harness struct {
	fr      *firstRun
	hub     *downloadtest.Hub
	store   *settings.Store
	snap    string
	settled chan struct{}
	ready   []string // paths onReady was called with
}

func newHarness(t *testing.T, reason error) *harness {
	t.Helper()
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("HOME", home)
	snap, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	hub, err := downloadtest.NewHub(snap, download.OfficialRepo, map[string][]byte{"LICENSE": []byte(licenseText)})
	if err != nil {
		t.Fatal(err)
	}
	remote, stop := hub.Start()
	t.Cleanup(stop)
	a := test.NewTempApp(t)
	h := &harness{hub: hub, store: &settings.Store{Path: filepath.Join(home, "Easel", "settings.json")}, snap: snap, settled: make(chan struct{}, 16)}
	h.fr = newFirstRun(a, h.store, reason, remote, func(p string) { h.ready = append(h.ready, p) })
	h.fr.settled = func() { h.settled <- struct{}{} }
	h.fr.w.Resize(fyne.NewSize(860, 620))
	t.Cleanup(func() {
		if len(h.ready) == 0 { // Start closes the window itself
			h.fr.w.Close()
		}
	})
	return h
}

// wait blocks until the window has shown the outcome of its background job.
func (h *harness) wait(t *testing.T) {
	t.Helper()
	select {
	case <-h.settled:
	case <-time.After(3 * time.Minute): // a deadline for a hung job, not a synchronisation
		t.Fatal("the window's background job never finished")
	}
}

func (h *harness) markup() string { return test.RenderToMarkup(h.fr.w.Canvas()) }

func TestNeedsSetupWithoutAModel(t *testing.T) {
	needed, why := NeedsSetup(settings.Defaults())
	if !needed || !errors.Is(why, modelsetup.ErrNoModel) {
		t.Errorf("NeedsSetup(defaults) = %v, %v; want true, ErrNoModel", needed, why)
	}
}

func TestFirstRunOffersThreeWays(t *testing.T) {
	h := newHarness(t, nil)
	m := h.markup()
	for _, want := range []string{"I have a model file", "I downloaded the snapshot", "Download it for me",
		"Open a .cmf file…", "Choose the snapshot folder…", "Download…"} {
		if !strings.Contains(m, want) {
			t.Errorf("the first-run window does not show %q", want)
		}
	}
	if h.fr.choose.reason.Visible() {
		t.Error("a reason is shown on a genuine first run")
	}

	h2 := newHarness(t, errors.New("/Volumes/USB/qwen.cmf: no such file"))
	if !h2.fr.choose.reason.Visible() || !strings.Contains(h2.fr.choose.reason.Text, "/Volumes/USB/qwen.cmf") {
		t.Errorf("reason %q; want the configured model's problem", h2.fr.choose.reason.Text)
	}
}

// Offline, the download page says so in a plain sentence (no socket or resolver text) and offers
// Try again.
func TestDownloadOfflineSaysSoPlainly(t *testing.T) {
	h := newHarness(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.fr.remote = &download.Remote{BaseURL: "http://" + ln.Addr().String(), Repo: download.OfficialRepo}
	ln.Close() // nothing answers there: as offline
	test.Tap(h.fr.choose.downloadButton)
	h.wait(t)
	p := h.fr.dl
	if !strings.Contains(p.status.Text, "cannot be reached: this computer seems to be offline") || strings.Contains(p.status.Text, "dial") || !p.retryButton.Visible() {
		t.Errorf("offline the page says %q (Try again shown: %v)", p.status.Text, p.retryButton.Visible())
	}
}

func TestDownloadShowsLicenseAndSizeAndStartsOnlyWhenAccepted(t *testing.T) {
	h := newHarness(t, nil)
	test.Tap(h.fr.choose.downloadButton)
	h.wait(t)
	p := h.fr.dl
	if p.license.Text != licenseText {
		t.Errorf("license shown: %q", p.license.Text)
	}
	if !strings.Contains(p.sizes.Text, modelsetup.FormatBytes(p.plan.Bytes)) || !strings.Contains(p.sizes.Text, "free") {
		t.Errorf("sizes %q; want the download's size %s and the free space", p.sizes.Text, modelsetup.FormatBytes(p.plan.Bytes))
	}
	if !p.startButton.Disabled() {
		t.Fatal("Download is enabled before the license is accepted")
	}
	test.Tap(p.accept)
	if p.startButton.Disabled() {
		t.Fatal("Download is still disabled after accepting the license")
	}
	test.Tap(p.accept)
	if !p.startButton.Disabled() {
		t.Fatal("Download stays enabled after un-ticking the license")
	}
	test.Tap(p.accept)
	test.Tap(p.startButton)
	h.wait(t)
	if h.fr.ready == nil {
		t.Fatalf("download did not reach the ready page: %s", p.status.Text)
	}
	s, err := h.store.Load()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := modelsetup.DefaultModelPath(convert.ProfileCortiq)
	if s.Model != want {
		t.Errorf("settings model %q; want %q", s.Model, want)
	}
	if h.fr.ready.deleteButton == nil {
		t.Fatal("the ready page does not offer to delete the downloaded snapshot")
	}
	test.Tap(h.fr.ready.deleteButton)
	test.Tap(findButton(t, h.fr.w, "Yes"))
	if _, err := os.Stat(p.dest); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the snapshot %s is still there after deleting it: %v", p.dest, err)
	}
	if _, err := modelsetup.Check(want); err != nil {
		t.Errorf("the model file after deleting the snapshot: %v", err)
	}
}

func TestConvertThroughTheWindowReachesReady(t *testing.T) {
	h := newHarness(t, nil)
	h.fr.showConvert(h.snap) // what choosing the folder in the dialog does
	h.wait(t)
	p := h.fr.conv
	for _, want := range []string{"✓ denoiser (DiT) — transformer/", "✓ text encoder", "✓ image decoder (VAE) — vae/"} {
		if !strings.Contains(p.contents.Text, want) {
			t.Errorf("contents %q lack %q", p.contents.Text, want)
		}
	}
	if !strings.Contains(p.space.Text, "free on that disk") || p.startButton.Disabled() {
		t.Fatalf("space %q, start disabled %v; want the space shown and Convert enabled", p.space.Text, p.startButton.Disabled())
	}
	test.Tap(p.startButton)
	h.wait(t)
	if h.fr.ready == nil {
		t.Fatalf("the conversion did not reach the ready page: %s", p.status.Text)
	}
	s, err := h.store.Load()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := modelsetup.DefaultModelPath(convert.ProfileCortiq)
	if s.Model != want {
		t.Errorf("settings model %q; want %q", s.Model, want)
	}
	if _, err := modelsetup.Check(want); err != nil {
		t.Errorf("the converted model: %v", err)
	}
	test.Tap(h.fr.ready.startButton)
	if len(h.ready) != 1 || h.ready[0] != want {
		t.Errorf("onReady got %v; want [%s]", h.ready, want)
	}
}

func TestConvertShowsAnIncompleteSnapshot(t *testing.T) {
	h := newHarness(t, nil)
	partial := t.TempDir()
	for _, part := range []string{"model_index.json", "transformer", "text_encoder", "processor", "scheduler"} {
		if err := os.Symlink(filepath.Join(h.snap, part), filepath.Join(partial, part)); err != nil {
			t.Fatal(err)
		}
	}
	h.fr.showConvert(partial)
	h.wait(t)
	p := h.fr.conv
	if !strings.Contains(p.contents.Text, "✗ image decoder (VAE) — vae/ is missing") || !p.startButton.Disabled() ||
		!strings.Contains(p.space.Text, "cannot be converted") {
		t.Errorf("contents %q, space %q, start disabled %v", p.contents.Text, p.space.Text, p.startButton.Disabled())
	}
}

func TestOpenAModelFileVerifyAndUse(t *testing.T) {
	h := newHarness(t, nil)
	path := filepath.Join(t.TempDir(), "tiny.cmf")
	if _, err := modelsetup.ConvertSnapshot(context.Background(), h.snap, path, convert.ProfileCortiq, nil); err != nil {
		t.Fatal(err)
	}
	h.fr.showOpen(path)
	h.wait(t)
	p := h.fr.open
	if p.useButton.Disabled() || !strings.Contains(p.status.Text, "Qwen-Image-2.1, Q4_BLOCK") {
		t.Fatalf("status %q, use disabled %v", p.status.Text, p.useButton.Disabled())
	}
	test.Tap(p.verifyButton)
	h.wait(t)
	if !strings.Contains(p.status.Text, "Every hash matches") || p.verifyBar.Value != 1 {
		t.Errorf("after Verify: %q, bar %v", p.status.Text, p.verifyBar.Value)
	}
	test.Tap(p.useButton)
	s, err := h.store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if h.fr.ready == nil || s.Model != path {
		t.Errorf("ready page %v, settings model %q; want %q", h.fr.ready != nil, s.Model, path)
	}

	bad := filepath.Join(t.TempDir(), "notes.cmf")
	os.WriteFile(bad, []byte("these are my notes, not a model file; long enough to fill the envelope of a CMF file and then some more bytes........................................."), 0o644)
	h.fr.showOpen(bad)
	h.wait(t)
	if !h.fr.open.useButton.Disabled() || !strings.Contains(h.fr.open.status.Text, "cannot be used") {
		t.Errorf("a non-model file: status %q, use disabled %v", h.fr.open.status.Text, h.fr.open.useButton.Disabled())
	}
}

func TestSettingsFormChecksAndKeepsValues(t *testing.T) {
	test.NewTempApp(t)
	base := settings.Defaults()
	base.CFG = 4
	f := newSettingsForm(base)
	if f.backend.Selected != backendLabels[0].label {
		t.Errorf("backend shown %q for %q", f.backend.Selected, base.Backend)
	}
	if f.preview.Selected != previewLabels[0].label {
		t.Errorf("preview shown %q for %q", f.preview.Selected, base.Preview)
	}
	f.backend.SetSelected("CPU")
	f.preview.SetSelected(previewLabels[1].label)
	f.width.SetText("768")
	f.steps.SetText("twenty")
	if _, err := f.settings(); err == nil || !strings.Contains(err.Error(), "steps") {
		t.Errorf("steps %q accepted: %v", f.steps.Text, err)
	}
	f.steps.SetText("20")
	s, err := f.settings()
	if err != nil {
		t.Fatal(err)
	}
	if s.Backend != settings.BackendCPU || s.Preview != settings.PreviewSharp || s.Width != 768 || s.Steps != 20 || s.CFG != 4 {
		t.Errorf("settings %+v; want cpu, sharp preview, width 768, 20 steps, CFG kept at 4", s)
	}
	f.model.SetText(filepath.Join(t.TempDir(), "missing.cmf"))
	if _, err := f.settings(); err == nil {
		t.Error("a missing model file was accepted")
	}
}

func TestDownloadPausesAndResumes(t *testing.T) {
	h := newHarness(t, nil)
	test.Tap(h.fr.choose.downloadButton)
	h.wait(t)
	p := h.fr.dl
	held := h.hub.Hold()
	test.Tap(p.accept)
	test.Tap(p.startButton)
	select {
	case <-held: // a file is being downloaded
	case <-time.After(time.Minute):
		t.Fatal("the download never asked the hub for a file")
	}
	if !h.fr.back.Disabled() || p.pauseButton.Text != "Pause" {
		t.Errorf("during the download: Back disabled %v, button %q; want Back disabled and Pause", h.fr.back.Disabled(), p.pauseButton.Text)
	}
	test.Tap(p.pauseButton)
	h.wait(t)
	if p.pauseButton.Text != "Resume" || !strings.Contains(p.status.Text, "Paused") || h.fr.back.Disabled() || h.fr.ready != nil {
		t.Fatalf("after Pause: button %q, status %q, Back disabled %v", p.pauseButton.Text, p.status.Text, h.fr.back.Disabled())
	}
	if _, err := os.Stat(p.out); err == nil {
		t.Fatal("a model file exists after pausing the download")
	}
	h.hub.Release()
	test.Tap(p.pauseButton)
	h.wait(t)
	if h.fr.ready == nil {
		t.Fatalf("the resumed download did not reach the ready page: %s", p.status.Text)
	}
}

// findButton finds a button by its text in the window's top overlay (a dialog).
func findButton(t *testing.T, w fyne.Window, text string) *widget.Button {
	t.Helper()
	var found *widget.Button
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch v := o.(type) {
		case *widget.Button:
			if v.Text == text {
				found = v
			}
		case *fyne.Container:
			for _, c := range v.Objects {
				walk(c)
			}
		case fyne.Widget:
			r := test.TempWidgetRenderer(t, v)
			for _, c := range r.Objects() {
				walk(c)
			}
		}
	}
	top := w.Canvas().Overlays().Top()
	if top == nil {
		t.Fatal("no dialog is shown")
	}
	walk(top)
	if found == nil {
		t.Fatalf("the dialog has no %q button", text)
	}
	return found
}

func TestSettingsDialogSavesWhatItShows(t *testing.T) {
	test.NewTempApp(t)
	store := &settings.Store{Path: filepath.Join(t.TempDir(), "settings.json")}
	w := test.NewTempWindow(t, widget.NewLabel("main window"))
	w.Resize(fyne.NewSize(900, 700))
	var saved []settings.Settings
	f := showSettings(w, store, func(s settings.Settings) { saved = append(saved, s) }, "", nil)
	if !strings.Contains(test.RenderToMarkup(w.Canvas()), "Default steps") {
		t.Fatal("the settings dialog is not shown")
	}
	f.backend.SetSelected("Metal (GPU)")
	f.steps.SetText("28")
	if !f.tune.Checked {
		t.Error("GPU tuning is off in new settings")
	}
	f.tune.SetChecked(false)
	// The share token's Copy puts it on the clipboard.
	f.shareToken.SetText("0123456789abcdef")
	test.Tap(findButton(t, w, "Copy"))
	if got := fyne.CurrentApp().Clipboard().Content(); got != "0123456789abcdef" {
		t.Errorf("Copy put %q on the clipboard, want the share token", got)
	}
	test.Tap(findButton(t, w, "Save"))
	s, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(saved) != 1 || s.Backend != settings.BackendMetal || s.Steps != 28 || !s.NoGPUTuning || saved[0] != s {
		t.Errorf("saved %+v, file %+v; want Metal, 28 steps and GPU tuning off in both", saved, s)
	}
}

func TestStartOpensTheFirstRunWindowOnlyWithoutAUsableModel(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("HOME", home)
	a := test.NewTempApp(t)
	mains := 0
	Start(a, func() { mains++ })
	firstRunWindows := func() (n int) {
		for _, w := range a.Driver().AllWindows() {
			if strings.Contains(w.Title(), "set up the model") {
				n++
			}
		}
		return n
	}
	if mains != 0 || firstRunWindows() != 1 {
		t.Fatalf("without a model: main window opened %d times, first-run windows %d; want 0 and 1", mains, firstRunWindows())
	}

	snap, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tiny.cmf")
	if _, err := modelsetup.ConvertSnapshot(context.Background(), snap, path, convert.ProfileCortiq, nil); err != nil {
		t.Fatal(err)
	}
	store, err := settings.DefaultStore()
	if err != nil {
		t.Fatal(err)
	}
	if err := modelsetup.SaveModel(store, path); err != nil {
		t.Fatal(err)
	}
	Start(a, func() { mains++ })
	if mains != 1 || firstRunWindows() != 1 {
		t.Errorf("with a usable model: main window opened %d times, first-run windows %d; want 1 and still the earlier one only", mains, firstRunWindows())
	}
}

func TestCancelConversionInTheWindowLeavesNoFile(t *testing.T) {
	h := newHarness(t, nil)
	out := filepath.Join(t.TempDir(), "elsewhere")
	h.fr.showConvert(h.snap)
	h.wait(t)
	p := h.fr.conv
	p.outDir = out // what "Save it elsewhere…" does
	cancelled := false
	h.fr.progressed = func() {
		if !cancelled {
			cancelled = true
			if p.cancelButton.Hidden || !h.fr.back.Disabled() {
				t.Errorf("while converting: Cancel hidden %v, Back disabled %v", p.cancelButton.Hidden, h.fr.back.Disabled())
			}
			test.Tap(p.cancelButton)
		}
	}
	test.Tap(p.startButton)
	h.wait(t)
	if !cancelled || h.fr.ready != nil || !strings.Contains(p.status.Text, "No model file was written") || p.startButton.Disabled() {
		t.Fatalf("after Cancel: status %q, ready page %v, Convert disabled %v", p.status.Text, h.fr.ready != nil, p.startButton.Disabled())
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		t.Errorf("%s was left behind", e.Name())
	}
	s, err := h.store.Load()
	if err != nil || s.Model != "" {
		t.Errorf("settings after a cancelled conversion: model %q, %v", s.Model, err)
	}
}
