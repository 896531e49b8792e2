package download_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"easel/app/download"
	"easel/app/download/downloadtest"
	"easel/internal/golden"
)

const repo = "Qwen/Qwen-Image-2.1"

func startHub(t *testing.T) (*downloadtest.Hub, *download.Remote) {
	t.Helper()
	snap, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	hub, err := downloadtest.NewHub(snap, repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	remote, stop := hub.Start() // listens on 127.0.0.1 only
	t.Cleanup(stop)
	return hub, remote
}

// served is the content the hub serves at path.
func served(hub *downloadtest.Hub, path string) []byte {
	b, _ := hub.File(path)
	return b
}

func assertSameAsSnapshot(t *testing.T, hub *downloadtest.Hub, dest string, files []download.File) {
	t.Helper()
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(dest, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		if !bytes.Equal(got, served(hub, f.Path)) {
			t.Fatalf("%s differs from the repository's file", f.Path)
		}
		if _, err := os.Stat(filepath.Join(dest, filepath.FromSlash(f.Path)) + ".part"); err == nil {
			t.Errorf("%s.part was left behind", f.Path)
		}
	}
}

func TestListReadsSizesAndHashes(t *testing.T) {
	hub, remote := startHub(t)
	files, err := remote.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(hub.Paths()) {
		t.Fatalf("listed %d files, the repository has %d (directories must be skipped)", len(files), len(hub.Paths()))
	}
	for _, f := range files {
		if f.Size != int64(len(served(hub, f.Path))) {
			t.Errorf("%s: size %d", f.Path, f.Size)
		}
		if hub.IsLFS(f.Path) != (f.SHA256 != "") || (f.SHA256 == "") == (f.GitOID == "") {
			t.Errorf("%s: sha256 %q git %q", f.Path, f.SHA256, f.GitOID)
		}
	}
}

func TestDownloadWholeSnapshotAndSkipVerifiedFiles(t *testing.T) {
	hub, remote := startHub(t)
	ctx := context.Background()
	files, err := remote.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	files = download.Wanted(files)
	dest := t.TempDir()
	var last download.Progress
	d := &download.Downloader{Remote: remote, Dest: dest, Progress: func(p download.Progress) { last = p }}
	if err := d.Run(ctx, files); err != nil {
		t.Fatal(err)
	}
	assertSameAsSnapshot(t, hub, dest, files)
	if last.Done != len(files) || last.Bytes != last.Total || last.Total == 0 {
		t.Errorf("final progress %+v", last)
	}
	before := hub.FileRequests()
	if err := d.Run(ctx, files); err != nil {
		t.Fatal(err)
	}
	if hub.FileRequests() != before {
		t.Errorf("a second run fetched %d files again; verified files must be skipped", hub.FileRequests()-before)
	}
}

func TestInterruptedTransferResumesWithRange(t *testing.T) {
	hub, remote := startHub(t)
	ctx := context.Background()
	const big = "text_encoder/model.safetensors"
	hub.CutOnce(big, 3<<20) // the connection drops after 3 MiB
	files := []download.File{}
	all, err := remote.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range all {
		if f.Path == big {
			files = append(files, f)
		}
	}
	dest := t.TempDir()
	d := &download.Downloader{Remote: remote, Dest: dest}
	if err := d.Run(ctx, files); err != nil {
		t.Fatal(err)
	}
	assertSameAsSnapshot(t, hub, dest, files)
	reqs := hub.RequestsFor(big)
	if len(reqs) != 2 || !strings.HasSuffix(reqs[1], "bytes=3145728-") {
		t.Fatalf("requests %q: want a second request resuming at byte 3145728", reqs)
	}
}

func TestPauseAndResume(t *testing.T) {
	hub, remote := startHub(t)
	files, err := remote.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	files = download.Wanted(files)
	dest := t.TempDir()
	ctx, pause := context.WithCancel(context.Background())
	const big = "text_encoder/model.safetensors"
	// The user presses Pause as the first megabyte of the text encoder's weights lands on disk
	// (every chunk is reported, so this happens mid-file on any machine).
	d := &download.Downloader{Remote: remote, Dest: dest, ReportEvery: time.Nanosecond, Progress: func(p download.Progress) {
		if p.File == big && p.Done < p.Files {
			pause()
		}
	}}
	if err := d.Run(ctx, files); !errors.Is(err, context.Canceled) {
		t.Fatalf("paused run returned %v, want context.Canceled", err)
	}
	part, err := os.Stat(filepath.Join(dest, filepath.FromSlash(big)) + ".part")
	if err != nil || part.Size() == 0 || part.Size() >= int64(len(served(hub, big))) {
		t.Fatalf("after the pause the partial file is %v (%v); want part of the file kept", part, err)
	}
	d.Progress = nil
	if err := d.Run(context.Background(), files); err != nil {
		t.Fatal(err)
	}
	assertSameAsSnapshot(t, hub, dest, files)
	reqs := hub.RequestsFor(big)
	if want := fmt.Sprintf("bytes=%d-", part.Size()); len(reqs) != 2 || !strings.HasSuffix(reqs[1], want) {
		t.Fatalf("requests %q: the resumed run should ask for %s", reqs, want)
	}
}

func TestCorruptedFileIsCaughtAndFetchedAgain(t *testing.T) {
	hub, remote := startHub(t)
	ctx := context.Background()
	all, err := remote.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var files []download.File
	for _, f := range all {
		if f.Path == "vae/diffusion_pytorch_model.safetensors" || f.Path == "transformer/config.json" {
			files = append(files, f)
			hub.Corrupt(f.Path, 1) // the first copy of each arrives with a flipped byte
		}
	}
	if len(files) != 2 {
		t.Fatalf("fixture files missing: %v", files)
	}
	dest := t.TempDir()
	if err := (&download.Downloader{Remote: remote, Dest: dest}).Run(ctx, files); err != nil {
		t.Fatal(err)
	}
	assertSameAsSnapshot(t, hub, dest, files)
	for _, f := range files {
		if n := len(hub.RequestsFor(f.Path)); n != 2 {
			t.Errorf("%s fetched %d times, want 2 (corrupt, then good)", f.Path, n)
		}
	}
}

func TestAlwaysCorruptGivesUpWithMessage(t *testing.T) {
	hub, remote := startHub(t)
	all, _ := remote.List(context.Background())
	var files []download.File
	for _, f := range all {
		if f.Path == "scheduler/scheduler_config.json" {
			files = append(files, f)
			hub.Corrupt(f.Path, 100)
		}
	}
	dest := t.TempDir()
	err := (&download.Downloader{Remote: remote, Dest: dest, Retries: 1}).Run(context.Background(), files)
	if err == nil || !strings.Contains(err.Error(), "scheduler/scheduler_config.json") || !strings.Contains(err.Error(), "corrupted") {
		t.Fatalf("want an error naming the corrupted file, got %v", err)
	}
	if _, err := os.Stat(filepath.Join(dest, "scheduler", "scheduler_config.json")); err == nil {
		t.Error("a corrupted file was kept under its final name")
	}
}

func TestMissingFileIsA404Message(t *testing.T) {
	hub, remote := startHub(t)
	hub.Missing("transformer/diffusion_pytorch_model-00002-of-00002.safetensors")
	files, err := remote.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	err = (&download.Downloader{Remote: remote, Dest: t.TempDir()}).Run(context.Background(), download.Wanted(files))
	if err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "00002-of-00002") {
		t.Fatalf("want a 404 message naming the file, got %v", err)
	}
	if n := len(hub.RequestsFor("transformer/diffusion_pytorch_model-00002-of-00002.safetensors")); n != 1 {
		t.Errorf("a 404 was retried %d times; it cannot succeed", n)
	}
}

func TestUnknownRepositoryIsReported(t *testing.T) {
	_, remote := startHub(t)
	remote.Repo = "Qwen/No-Such-Model"
	_, err := remote.List(context.Background())
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("got %v", err)
	}
}

func TestNotEnoughDiskSpaceIsRefusedUpFront(t *testing.T) {
	_, remote := startHub(t)
	huge := []download.File{{Path: "transformer/huge.safetensors", Size: 1 << 60, SHA256: "00"}}
	err := (&download.Downloader{Remote: remote, Dest: t.TempDir()}).Run(context.Background(), huge)
	if !errors.Is(err, download.ErrNoSpace) || !strings.Contains(err.Error(), "GB") {
		t.Fatalf("got %v", err)
	}
}
