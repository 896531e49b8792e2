package setup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"easel/app/download/downloadtest"
	"easel/app/fastdraft"
	"easel/app/modelsetup"
	"easel/app/settings"
	"easel/engine/lora"
)

// TestReadyPageOffersAFastDraftLoRA: the first-run window's last page shows a few-step LoRA's
// license and size before anything is downloaded, downloads it verified into the LoRA folder
// with its preset beside it, and puts it in the main window's LoRA list.
func TestReadyPageOffersAFastDraftLoRA(t *testing.T) {
	h := newHarness(t, nil)
	e := fastdraft.Catalogue[0]
	body := []byte(strings.Repeat("lora bytes ", 50_000))
	hub, err := downloadtest.NewHub("", e.Repo, map[string][]byte{e.File: body, "README.md": []byte("license: apache-2.0\n")})
	if err != nil {
		t.Fatal(err)
	}
	remote, stop := hub.Start()
	t.Cleanup(stop)
	dir := t.TempDir()
	h.fr.loraFolder = dir
	h.fr.loraStore = &settings.LoRAStore{Path: filepath.Join(dir, "loras.json")}
	h.fr.showReady(&modelsetup.Model{Path: "/models/tiny.cmf", QuantType: "Q4_BLOCK", Vision: true}, "")
	p := h.fr.ready.fast
	if p == nil {
		t.Fatal("the ready page offers no fast-draft LoRA")
	}
	p.remote = remote
	if !p.startButton.Disabled() || !strings.Contains(p.note.Text, e.Repo) {
		t.Fatalf("before asking: start disabled %v, note %q", p.startButton.Disabled(), p.note.Text)
	}
	test.Tap(p.ask)
	h.wait(t)
	if !strings.Contains(p.license.Text, "apache-2.0") || !strings.Contains(p.size.Text, e.SaveAs) || hub.FileRequests() != 1 {
		t.Fatalf("plan: license %q, size %q, %d file requests", p.license.Text, p.size.Text, hub.FileRequests())
	}
	if !p.startButton.Disabled() {
		t.Fatal("Download is on before the license is accepted")
	}
	test.Tap(p.accept)
	test.Tap(p.startButton)
	h.wait(t)
	path := filepath.Join(dir, e.SaveAs)
	if !strings.Contains(p.status.Text, "verified") {
		t.Fatalf("status %q", p.status.Text)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != string(body) {
		t.Fatalf("downloaded LoRA: %v", err)
	}
	if !lora.HasPresetFile(path) {
		t.Error("no preset beside the downloaded LoRA")
	}
	ls, err := h.fr.loraStore.Load()
	if err != nil || len(ls) != 1 || ls[0].Path != path || !ls[0].Enabled {
		t.Errorf("LoRA list %+v, %v", ls, err)
	}
}
