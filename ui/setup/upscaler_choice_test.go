package setup

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"easel/app/settings"
	"easel/ui/upscale"
)

// hasLabel says whether a label among o's laid-out objects reads text.
func hasLabel(o fyne.CanvasObject, text string) bool {
	for _, c := range test.LaidOutObjects(o) {
		if l, ok := c.(*widget.Label); ok && l.Text == text {
			return true
		}
	}
	return false
}

// The Settings dialog lists the upscalers folder's usable files beside Lanczos, with the chosen
// file's network, Files… listing each file's licence and a plain word for one that is not an
// upscaler; the choice is
// saved and shown chosen when the dialog opens again.
func TestSettingsDialogRemembersTheUpscaler(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	dir, err := settings.UpscalersDir()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "upscale_rrdb_x2.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"upscale_rrdb_x2.safetensors": b, "broken.pth": []byte("half a file")} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	test.NewTempApp(t)
	store := &settings.Store{Path: filepath.Join(t.TempDir(), "settings.json")}
	w := test.NewTempWindow(t, widget.NewLabel("main window"))
	w.Resize(fyne.NewSize(1280, 800))

	f := showSettings(w, store, nil, "", nil)
	up := f.upscaler
	if up.Select.Selected != upscale.LanczosLabel || up.Name() != "" {
		t.Fatalf("new settings choose %q (%q), not Lanczos", up.Select.Selected, up.Name())
	}
	if !slices.Equal(up.Select.Options, []string{upscale.LanczosLabel, "upscale_rrdb_x2"}) {
		t.Fatalf("the choices are %q", up.Select.Options)
	}
	if up.Files.Text != "Files (1 not usable)…" {
		t.Errorf("the files button says %q", up.Files.Text)
	}
	files := up.FilesText()
	if !strings.Contains(files, "broken — not usable: ") || !strings.Contains(files, "upscale_rrdb_x2 — RRDBNet ×2") || !strings.Contains(files, "Licence: ") {
		t.Errorf("Files… lists:\n%s", files)
	}
	test.Tap(up.Files)
	if top := w.Canvas().Overlays().Top(); top == nil || !hasLabel(top, files) {
		t.Error("Files… does not show the list")
	}
	test.Tap(findButton(t, w, "Close"))
	up.Select.SetSelected("upscale_rrdb_x2")
	if !strings.HasPrefix(up.About.Text, "RRDBNet ×2") {
		t.Errorf("the chosen file is described as %q", up.About.Text)
	}
	test.Tap(findButton(t, w, "Save"))
	s, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if s.Upscaler != "upscale_rrdb_x2" {
		t.Fatalf("saved upscaler %q", s.Upscaler)
	}
	if again := showSettings(w, store, nil, "", nil); again.upscaler.Select.Selected != "upscale_rrdb_x2" || again.upscaler.Name() != "upscale_rrdb_x2" {
		t.Errorf("the dialog opened again chooses %q", again.upscaler.Select.Selected)
	}

	// The file gone: the choice is kept and said as missing (Lanczos runs meanwhile).
	if err := os.Remove(filepath.Join(dir, "upscale_rrdb_x2.safetensors")); err != nil {
		t.Fatal(err)
	}
	if gone := showSettings(w, store, nil, "", nil); !strings.Contains(gone.upscaler.Select.Selected, "missing") || gone.upscaler.Name() != "upscale_rrdb_x2" {
		t.Errorf("with the file gone the dialog shows %q, keeps %q", gone.upscaler.Select.Selected, gone.upscaler.Name())
	}
}
