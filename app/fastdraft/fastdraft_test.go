package fastdraft

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/download"
	"easel/app/download/downloadtest"
	"easel/engine/lora"
)

const license = "Apache License 2.0\n"

// hubWith serves e's repository with a LoRA file of n bytes (and a license unless bare).
func hubWith(t *testing.T, e Published, n int, bare bool) (*downloadtest.Hub, *download.Remote, []byte) {
	t.Helper()
	body := make([]byte, n)
	for i := range body {
		body[i] = byte(i * 7)
	}
	extra := map[string][]byte{e.File: body}
	if !bare {
		extra["LICENSE"] = []byte(license)
	}
	hub, err := downloadtest.NewHub("", e.Repo, extra)
	if err != nil {
		t.Fatal(err)
	}
	remote, stop := hub.Start()
	t.Cleanup(stop)
	return hub, remote, body
}

func TestEveryPublishedLoRAHasAFileAPresetAndAName(t *testing.T) {
	for _, e := range Catalogue {
		if e.Repo == "" || !strings.HasSuffix(e.File, ".safetensors") || !strings.HasSuffix(e.SaveAs, ".safetensors") || e.Preset.Steps < 1 {
			t.Errorf("%+v", e)
		}
		if Find(e.Name) == nil || Find(e.SaveAs) == nil {
			t.Errorf("%s: not found by its names", e.Name)
		}
	}
	if Find("nothing") != nil {
		t.Error("found an entry that does not exist")
	}
}

func TestPlanShowsLicenseAndSizeThenDownloadsVerifiedWithItsPreset(t *testing.T) {
	e := Catalogue[1] // a file in a subfolder of its repository
	hub, base, body := hubWith(t, e, 3<<20, false)
	plan, err := PlanDownload(context.Background(), base, e)
	if err != nil {
		t.Fatal(err)
	}
	if plan.License != license || plan.File.Size != int64(len(body)) || plan.File.SHA256 == "" {
		t.Fatalf("plan: license %q, file %+v", plan.License, plan.File)
	}
	dir := t.TempDir()
	if s := plan.Describe(dir); !strings.Contains(s, "3.1 MB") && !strings.Contains(s, "MB") {
		t.Errorf("description %q has no size", s)
	}
	if hub.FileRequests() != 1 { // the license only
		t.Errorf("%d file requests before the download; want only the license's", hub.FileRequests())
	}
	var last download.Progress
	path, err := Download(context.Background(), plan, dir, func(p download.Progress) { last = p })
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, e.SaveAs) || last.Bytes != last.Total || last.Total != int64(len(body)) {
		t.Fatalf("path %s, progress %+v", path, last)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != string(body) {
		t.Fatalf("downloaded file differs: %v", err)
	}
	p, err := lora.PresetForFile(path, nil, plan.File.SHA256)
	if err != nil || p == nil || p.Steps != e.Preset.Steps || p.Source != "preset file" {
		t.Errorf("preset beside the download: %+v, %v", p, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".downloads")); err != nil {
		t.Errorf("the downloads folder: %v", err)
	}
	// Asked again: the verified file is kept, nothing is fetched.
	n := hub.FileRequests()
	if _, err := Download(context.Background(), plan, dir, nil); err != nil || hub.FileRequests() != n {
		t.Errorf("second download: %v, %d new requests", err, hub.FileRequests()-n)
	}
}

func TestPausedDownloadResumes(t *testing.T) {
	e := Catalogue[0]
	hub, base, body := hubWith(t, e, 2<<20, false)
	plan, err := PlanDownload(context.Background(), base, e)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	held := hub.Hold()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := Download(ctx, plan, dir, nil); done <- err }()
	<-held
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("paused download: %v", err)
	}
	if _, err := os.Stat(plan.Path(dir)); err == nil {
		t.Fatal("a paused download left the LoRA in place")
	}
	hub.Release()
	path, err := Download(context.Background(), plan, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(body) {
		t.Error("resumed file differs")
	}
}

func TestCorruptedDownloadIsRefused(t *testing.T) {
	e := Catalogue[2]
	_, base, _ := hubWith(t, e, 1<<20, false)
	plan, err := PlanDownload(context.Background(), base, e)
	if err != nil {
		t.Fatal(err)
	}
	plan.File.SHA256 = strings.Repeat("0", 64) // the hub's bytes no longer match what it listed
	dir := t.TempDir()
	if _, err := Download(context.Background(), plan, dir, nil); err == nil || !strings.Contains(err.Error(), "corrupted") {
		t.Errorf("err = %v; want the file refused as corrupted", err)
	}
	if _, err := os.Stat(plan.Path(dir)); err == nil {
		t.Error("a corrupted file was kept as the LoRA")
	}
}

func TestPlanSaysWhatIsMissing(t *testing.T) {
	e := Catalogue[0]
	_, base, _ := hubWith(t, e, 1000, true)
	if _, err := PlanDownload(context.Background(), base, e); err == nil || !strings.Contains(err.Error(), "license") {
		t.Errorf("no license: %v", err)
	}
	other := e
	other.File = "renamed.safetensors"
	if _, err := PlanDownload(context.Background(), base, other); err == nil || !strings.Contains(err.Error(), "has no file") {
		t.Errorf("missing file: %v", err)
	}
}
