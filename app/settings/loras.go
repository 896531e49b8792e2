package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
)

// LoRA is one entry of the window's LoRA list.
type LoRA struct {
	Path     string  `json:"path"`
	Enabled  bool    `json:"enabled"`
	Strength float64 `json:"strength"` // −2…2, 1 = as trained
}

// The strength slider's range.
const (
	MinLoRAStrength = -2
	MaxLoRAStrength = 2
)

// LoRAStore keeps the window's LoRA list in its own file beside the settings (loras.json), so
// that Settings stays a plain comparable value.
type LoRAStore struct {
	Path string
}

// DefaultLoRAStore is loras.json in the app-support folder.
func DefaultLoRAStore() (*LoRAStore, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	return &LoRAStore{Path: filepath.Join(dir, "loras.json")}, nil
}

// ValidateLoRAs checks each entry's file name and strength.
func ValidateLoRAs(ls []LoRA) error {
	for _, l := range ls {
		if l.Path == "" || math.IsNaN(l.Strength) || l.Strength < MinLoRAStrength || l.Strength > MaxLoRAStrength {
			return fmt.Errorf("LoRA %q at strength %g: each LoRA needs a file and a strength between %d and %d", l.Path, l.Strength, MinLoRAStrength, MaxLoRAStrength)
		}
	}
	return nil
}

// Load reads the list; a missing file is an empty list.
func (st *LoRAStore) Load() ([]LoRA, error) {
	b, err := os.ReadFile(st.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the LoRA list %s: %w", st.Path, err)
	}
	var ls []LoRA
	if err := json.Unmarshal(b, &ls); err != nil {
		return nil, fmt.Errorf("LoRA list %s is damaged (%v): fix it or delete it to start with no LoRAs", st.Path, err)
	}
	if err := ValidateLoRAs(ls); err != nil {
		return nil, fmt.Errorf("LoRA list %s: %w; fix it or delete it", st.Path, err)
	}
	return ls, nil
}

// Save writes the list atomically.
func (st *LoRAStore) Save(ls []LoRA) error {
	if err := ValidateLoRAs(ls); err != nil {
		return err
	}
	if ls == nil {
		ls = []LoRA{}
	}
	b, err := json.MarshalIndent(ls, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(st.Path, append(b, '\n'))
}
