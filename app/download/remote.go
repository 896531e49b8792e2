// Package download fetches a model repository (the official Qwen-Image-2.1 snapshot) into a local
// folder: resumable over HTTP Range, every file's size and hash checked against the repository's
// own metadata, with progress, pause (cancel the context) and resume (run again). A file that
// arrives corrupted is deleted and fetched once more; anything else wrong is an error that says
// which file and what to do.
package download

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// DefaultBaseURL is the Hugging Face hub; tests point a Remote at a server on loopback instead.
const DefaultBaseURL = "https://huggingface.co"

// OfficialRepo is the official Qwen-Image-2.1 repository (Qwen Research License).
const OfficialRepo = "Qwen/Qwen-Image-2.1"

// Remote is one model repository on a Hugging Face–compatible hub.
type Remote struct {
	BaseURL  string // e.g. DefaultBaseURL
	Repo     string // "owner/name"
	Revision string // branch, tag or commit; "" = main
	Client   *http.Client
}

// File is one file of the repository as its metadata describes it.
type File struct {
	Path   string // relative path in the repository, "/"-separated
	Size   int64
	SHA256 string // hex, for files stored in LFS (the weights); "" otherwise
	GitOID string // git blob SHA-1 (hex) of small files stored in git itself
}

func (r *Remote) client() *http.Client {
	if r.Client != nil {
		return r.Client
	}
	return http.DefaultClient
}

func (r *Remote) revision() string {
	if r.Revision == "" {
		return "main"
	}
	return r.Revision
}

// FileURL is where a file's bytes are served.
func (r *Remote) FileURL(p string) string {
	return strings.TrimRight(r.BaseURL, "/") + "/" + r.Repo + "/resolve/" + url.PathEscape(r.revision()) + "/" + escapePath(p)
}

func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

type treeEntry struct {
	Type string `json:"type"`
	Path string `json:"path"`
	Size int64  `json:"size"`
	OID  string `json:"oid"`
	LFS  *struct {
		OID  string `json:"oid"`
		Size int64  `json:"size"`
	} `json:"lfs"`
}

// List asks the hub for every file of the repository with its size and hashes.
func (r *Remote) List(ctx context.Context) ([]File, error) {
	u := strings.TrimRight(r.BaseURL, "/") + "/api/models/" + r.Repo + "/tree/" + url.PathEscape(r.revision()) + "?recursive=true"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := r.client().Do(req)
	if err != nil {
		if u := unreachable(r.BaseURL, err); u != nil {
			return nil, u
		}
		return nil, fmt.Errorf("listing %s: %w (check the network connection)", r.Repo, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("listing %s: the server answered %s; check the repository name and that you accepted its license on the hub", r.Repo, resp.Status)
	}
	var entries []treeEntry
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&entries); err != nil {
		return nil, fmt.Errorf("listing %s: the file list is not valid JSON: %v", r.Repo, err)
	}
	var files []File
	for _, e := range entries {
		if e.Type != "file" {
			continue
		}
		if strings.HasPrefix(e.Path, "/") || strings.Contains(e.Path, "..") || path.Clean(e.Path) != e.Path {
			return nil, fmt.Errorf("listing %s: refusing the unsafe file path %q", r.Repo, e.Path)
		}
		f := File{Path: e.Path, Size: e.Size, GitOID: e.OID}
		if e.LFS != nil {
			f.SHA256, f.Size, f.GitOID = e.LFS.OID, e.LFS.Size, ""
		}
		files = append(files, f)
	}
	return files, nil
}

// Fetch reads a small file (a license, a config) whole, up to limit bytes.
func (r *Remote) Fetch(ctx context.Context, p string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.FileURL(p), nil)
	if err != nil {
		return nil, err
	}
	resp, err := r.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", p, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching %s from %s: the server answered %s", p, r.Repo, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, limit))
}
