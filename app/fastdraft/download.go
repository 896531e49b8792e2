package fastdraft

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"easel/app/download"
	"easel/app/modelsetup"
	"easel/engine/lora"
)

// Plan is what downloading one published LoRA involves, shown before anything is downloaded.
type Plan struct {
	Entry  Published
	Remote *download.Remote
	// File is the LoRA as the hub lists it: its size and the SHA-256 the download is checked
	// against.
	File        download.File
	LicenseFile string
	License     string
}

// Describe states the size and where the file goes.
func (p *Plan) Describe(dir string) string {
	return fmt.Sprintf("%s from %s: %s, saved as %s in %s.", p.Entry.Name, p.Entry.Repo,
		modelsetup.FormatBytes(p.File.Size), p.Entry.SaveAs, dir)
}

// RemoteFor is the repository of e on the hub base points at (its BaseURL and Client).
func RemoteFor(base *download.Remote, e Published) *download.Remote {
	return &download.Remote{BaseURL: base.BaseURL, Client: base.Client, Repo: e.Repo}
}

// PlanDownload asks the hub for the LoRA's size and hash and for the repository's license. A
// file the hub lists without a SHA-256 cannot be verified and is refused.
func PlanDownload(ctx context.Context, base *download.Remote, e Published) (*Plan, error) {
	remote := RemoteFor(base, e)
	all, err := remote.List(ctx)
	if err != nil {
		return nil, err
	}
	p := &Plan{Entry: e, Remote: remote}
	found := false
	for _, f := range all {
		if f.Path == e.File {
			p.File, found = f, true
		}
	}
	if !found {
		return nil, fmt.Errorf("the repository %s has no file %s: it may have been renamed; download the LoRA from its page and add it with Add LoRA…", e.Repo, e.File)
	}
	if p.File.SHA256 == "" {
		return nil, fmt.Errorf("the hub lists %s of %s without a SHA-256, so the download could not be verified: download it from the repository's page and add it with Add LoRA…", e.File, e.Repo)
	}
	if p.LicenseFile, p.License, err = modelsetup.FetchLicense(ctx, remote, all); err != nil {
		return nil, err
	}
	return p, nil
}

// Path is where the plan's LoRA lands in the LoRA folder dir.
func (p *Plan) Path(dir string) string { return filepath.Join(dir, p.Entry.SaveAs) }

// partsDir is where the download is kept while it runs (and while paused): a folder of its own
// under the LoRA folder, named after the repository.
func (p *Plan) partsDir(dir string) string {
	return filepath.Join(dir, ".downloads", strings.ReplaceAll(p.Entry.Repo, "/", "__"))
}

// Download fetches the plan's LoRA into the LoRA folder dir with app/download (resuming a
// partial file; the hub's SHA-256 checked), moves it to Path and writes its preset beside it.
// A file already there with the hub's hash is kept as it is. Cancelling ctx pauses: calling
// Download again resumes. progress may be nil. It returns the LoRA's path.
func Download(ctx context.Context, p *Plan, dir string, progress func(download.Progress)) (string, error) {
	final := p.Path(dir)
	if sum, err := fileSHA256(final); err == nil && strings.EqualFold(sum, p.File.SHA256) {
		return final, lora.WritePresetFile(final, p.File.SHA256, p.Entry.Preset)
	}
	parts := p.partsDir(dir)
	if err := os.MkdirAll(parts, 0o755); err != nil {
		return "", fmt.Errorf("cannot create the LoRA folder %s: %v", parts, err)
	}
	d := &download.Downloader{Remote: p.Remote, Dest: parts, Progress: progress}
	if err := d.Run(ctx, []download.File{p.File}); err != nil {
		return "", err
	}
	got := filepath.Join(parts, filepath.FromSlash(p.File.Path))
	if err := os.Rename(got, final); err != nil {
		return "", fmt.Errorf("moving the downloaded LoRA into %s: %v", dir, err)
	}
	os.RemoveAll(parts)
	return final, lora.WritePresetFile(final, p.File.SHA256, p.Entry.Preset)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
