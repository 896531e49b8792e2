package modelsetup

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"easel/engine/convert"
)

// Component is one part of a Hugging Face snapshot, as found on disk.
type Component struct {
	Name  string // folder name: transformer, text_encoder, vae, processor, scheduler
	What  string // what it is, for people
	Found bool
	Files int
	Bytes int64
}

// snapshotParts are the folders of a Qwen-Image-2.1 snapshot (qi21-spec §11.1).
var snapshotParts = []struct{ name, what string }{
	{"transformer", "denoiser (DiT)"},
	{"text_encoder", "text encoder and vision tower (Qwen3-VL)"},
	{"vae", "image decoder (VAE)"},
	{"processor", "tokenizer"},
	{"scheduler", "scheduler settings"},
}

// Snapshot is what a snapshot folder holds and what converting it needs.
type Snapshot struct {
	Dir        string
	Components []Component
	Bytes      int64             // every file of the snapshot
	Estimate   *convert.Estimate // nil when the snapshot cannot be converted
	Problem    error             // why it cannot be converted (nil when it can)
	Out        string            // where the model file would go
	FreeBytes  int64             // free space on the disk that would hold Out
}

// Fits reports whether the model file fits on its disk.
func (s *Snapshot) Fits() bool {
	return s.Estimate != nil && s.FreeBytes >= s.Estimate.OutputBytes
}

// InspectSnapshot lists what the snapshot at dir holds and works out, from its headers alone, the
// size of the model file a conversion with profile would write to out and the free space there.
// An unconvertible snapshot is not an error: Problem says what is wrong, so the window can show it
// beside the components.
func InspectSnapshot(dir string, profile convert.Profile, out string) (*Snapshot, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s is not a folder: choose the folder of a downloaded Qwen-Image-2.1 snapshot (the one holding model_index.json)", dir)
	}
	s := &Snapshot{Dir: dir, Out: out}
	// Hugging Face's cache keeps a snapshot as symlinks into a blobs folder: follow them, and
	// count what they point at.
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	for _, part := range snapshotParts {
		c := Component{Name: part.name, What: part.what}
		c.Found, c.Files, c.Bytes = walkFiles(filepath.Join(root, part.name))
		s.Components = append(s.Components, c)
	}
	_, _, s.Bytes = walkFiles(root)
	if notSnapshot(root, s.Components) {
		// Nothing of a snapshot at all: a wrong folder, not a damaged download.
		s.Problem = fmt.Errorf("%s is not a model snapshot: it holds neither model_index.json nor the transformer, text_encoder and vae folders; choose the folder a Qwen-Image-2.1 download made (the one holding model_index.json)", dir)
	} else {
		s.Estimate, s.Problem = convert.EstimateConversion(dir, convert.Options{Profile: profile})
	}
	if s.FreeBytes, err = FreeBytes(out); err != nil {
		return nil, err
	}
	if st, err := os.Stat(partialPath(out)); err == nil {
		s.FreeBytes += st.Size() // an unfinished earlier conversion, which ConvertSnapshot removes
	}
	return s, nil
}

// notSnapshot says whether root has nothing of a snapshot: no model_index.json and none of its
// component folders.
func notSnapshot(root string, parts []Component) bool {
	if _, err := os.Stat(filepath.Join(root, "model_index.json")); err == nil {
		return false
	}
	for _, c := range parts {
		if c.Found {
			return false
		}
	}
	return true
}

// walkFiles counts the files under dir and their sizes, following symlinked files (partial
// downloads, *.part, are left out). found is false when dir does not exist.
func walkFiles(dir string) (found bool, files int, bytes int64) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		found = true
		if d.IsDir() || strings.HasSuffix(p, ".part") {
			return nil
		}
		if info, err := os.Stat(p); err == nil && !info.IsDir() {
			files++
			bytes += info.Size()
		}
		return nil
	})
	return found, files, bytes
}

// FolderBytes is the size of every file under dir (following symlinked files), e.g. to say how
// much deleting a downloaded snapshot gives back.
func FolderBytes(dir string) int64 {
	_, _, n := walkFiles(dir)
	return n
}
