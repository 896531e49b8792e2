package studiogen

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"easel/engine/cmf"
)

// A Mac joins a studio only with a sound model file: its fingerprint (app/checkpoint) hashes
// the header and the recorded tensor hashes, not the payloads, so a damaged copy would take jobs
// and return other pixels under the good fingerprint. Before it joins, a worker (`easel studio
// join`, a hub's own worker, a window lent to a studio) verifies the whole file as `easel
// verify` does; a file once found sound is remembered by path, size and modification time (in the user's
// cache folder), so a restart does not hash 13 GB again.

// verifiedModels is the remembered sound files.
type verifiedModels map[string]verifiedModel

type verifiedModel struct {
	Size    int64 `json:"size"`
	ModTime int64 `json:"mtime_ns"`
}

// VerifiedCachePath is where the sound files are remembered ("" when there is no cache folder).
func VerifiedCachePath() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "Easel", "verified-models.json")
}

// VerifyModelOnce verifies the model file at path unless it was found sound at its size and
// modification time. starting (nil: nothing) is told just before a full check, which reads the
// whole file. A damaged file's error says the Mac cannot join and what to do.
func VerifyModelOnce(ctx context.Context, path string, starting func()) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	st, err := os.Stat(abs)
	if err != nil {
		return fmt.Errorf("model file %s cannot be read: %w", path, err)
	}
	seen := verifiedModels{}
	cache := VerifiedCachePath()
	if cache != "" {
		if b, err := os.ReadFile(cache); err == nil {
			json.Unmarshal(b, &seen) // a damaged list only costs a new check
		}
	}
	if v, ok := seen[abs]; ok && v.Size == st.Size() && v.ModTime == st.ModTime().UnixNano() {
		return nil
	}
	f, err := cmf.Open(abs)
	if err != nil {
		return fmt.Errorf("this model cannot join the studio: %w", err)
	}
	defer f.Close()
	if starting != nil {
		starting()
	}
	if err := f.VerifyContext(ctx, nil); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("this model cannot join the studio: %w. Its images would differ from the other Macs': copy it again (easel verify checks a copy)", err)
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
