package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Draft is the window's recipe as it was left: the prompt and the everyday settings, so a
// relaunch starts where the artist stopped (app/compose turns it into a compose.Draft and back).
type Draft struct {
	Prompt      string  `json:"prompt"`
	Negative    string  `json:"negative,omitempty"`
	Transparent bool    `json:"transparent,omitempty"`
	Size        string  `json:"size"`             // "preset", "custom" or "image"
	Aspect      string  `json:"aspect,omitempty"` // the preset's name ("16:9")
	Scale       string  `json:"scale,omitempty"`  // "1K" or "2K"
	Width       int     `json:"width,omitempty"`  // the custom size
	Height      int     `json:"height,omitempty"`
	Steps       int     `json:"steps"`
	CFG         float64 `json:"cfg"`
	Count       int     `json:"count,omitempty"`
	RandomSeed  bool    `json:"random_seed"`
	Seed        uint64  `json:"seed,omitempty"`
	// Canvas is the canvas document (the start image, its mask, the extension), nil for a
	// text-to-image draft (canvas.go).
	Canvas *Canvas `json:"canvas,omitempty"`
}

// DraftStore keeps the draft in one file.
type DraftStore struct {
	Path string
}

// DefaultDraftStore is draft.json in the app-support folder.
func DefaultDraftStore() (*DraftStore, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	return &DraftStore{Path: filepath.Join(dir, "draft.json")}, nil
}

// Load reads the draft; ok is false when none was saved. A damaged file is an error naming it.
func (st *DraftStore) Load() (d Draft, ok bool, err error) {
	b, err := os.ReadFile(st.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return Draft{}, false, nil
	}
	if err != nil {
		return Draft{}, false, fmt.Errorf("the last draft (%s) could not be read: %w", st.Path, err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return Draft{}, false, fmt.Errorf("the last draft (%s) is damaged (%v): the window starts from the settings' defaults", st.Path, err)
	}
	return d, true, nil
}

// Save writes the draft atomically.
func (st *DraftStore) Save(d Draft) error {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(st.Path, append(b, '\n'))
}
