package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A Mac joins a studio only with a sound model file: its fingerprint (app/checkpoint) hashes
// the header and the recorded tensor hashes, not the payloads, so a damaged copy would take jobs
// and return other pixels under the good fingerprint. Before it joins, the worker verifies the
// whole file as `easel verify` does; a file once found sound is remembered by path, size and
// modification time (in the user's cache folder), so a restart does not hash 13 GB again.

// verifiedModels is the remembered sound files.
type verifiedModels map[string]verifiedModel

type verifiedModel struct {
	Size    int64 `json:"size"`
	ModTime int64 `json:"mtime_ns"`
}

// verifiedCachePath is where the sound files are remembered ("" when there is no cache folder).
func verifiedCachePath() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "Easel", "verified-models.json")
}

// verifyModelOnce verifies the model file unless it was found sound at this size and time.
func verifyModelOnce(ctx context.Context, path string, stderr io.Writer) *failure {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	f, fl := openModel(path)
	if fl != nil {
		return fl
	}
	defer f.Close()
	st, err := os.Stat(abs)
	if err != nil {
		return fail(ExitModelMissing, "model file %s cannot be read: %v", path, err)
	}
	seen := verifiedModels{}
	cache := verifiedCachePath()
	if cache != "" {
		if b, err := os.ReadFile(cache); err == nil {
			json.Unmarshal(b, &seen)
		}
	}
	if v, ok := seen[abs]; ok && v.Size == st.Size() && v.ModTime == st.ModTime().UnixNano() {
		return nil
	}
	fmt.Fprintf(stderr, "easel studio: verifying %s before joining (once per file)…\n", path)
	if err := f.VerifyContext(ctx, nil); err != nil {
		return fail(ExitModelInvalid, "this model cannot join the studio: %v. Its images would differ from the other Macs': copy it again (easel verify checks a copy)", err)
	}
	if cache != "" {
		seen[abs] = verifiedModel{Size: st.Size(), ModTime: st.ModTime().UnixNano()}
		if b, err := json.Marshal(seen); err == nil && os.MkdirAll(filepath.Dir(cache), 0o755) == nil {
			tmp := cache + ".tmp"
			if os.WriteFile(tmp, b, 0o644) == nil {
				os.Rename(tmp, cache)
			}
		}
	}
	return nil
}
