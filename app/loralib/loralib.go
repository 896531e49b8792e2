// Package loralib is the application's side of LoRAs: reading "FILE[:STRENGTH]" specs, a
// cache of loaded LoRA files (so changing a strength, or generating again, reloads nothing),
// and finding the files an image names, by SHA-256, in the LoRA folder and beside the image.
package loralib

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"easel/app/imagefile"
	"easel/engine/lora"
	"easel/engine/qi21"
	"easel/engine/sched"
)

// MaxStrength bounds a strength's magnitude: far beyond any useful value (the window's slider
// spans −2…2), it catches typing slips like "1e9".
const MaxStrength = 100

// ParseSpec reads "FILE[:STRENGTH]" (strength 1 when left out). A colon followed by something
// that is not a number belongs to the file name.
func ParseSpec(spec string) (path string, strength float64, err error) {
	path, strength = spec, 1
	if i := strings.LastIndex(spec, ":"); i >= 0 {
		if v, perr := strconv.ParseFloat(spec[i+1:], 64); perr == nil {
			path, strength = spec[:i], v
		}
	}
	if path == "" {
		return "", 0, fmt.Errorf("--lora %q: give a LoRA file, optionally followed by :STRENGTH (like style.safetensors:0.8)", spec)
	}
	if math.IsNaN(strength) || math.Abs(strength) > MaxStrength {
		return "", 0, fmt.Errorf("--lora %q: strength %v is out of range; use a number between −%d and %d (1 = as trained)", spec, strength, MaxStrength, MaxStrength)
	}
	return path, strength, nil
}

// Library loads LoRA files bound to one model's layers and keeps them: a file is read again only
// when it changed on disk.
type Library struct {
	layers []lora.Layer
	mu     sync.Mutex
	files  map[string]cached
}

type cached struct {
	f       *lora.File
	size    int64
	modTime int64
}

// NewLibrary is a library for a model with the given linear layers (pipeline.LoRALayers).
func NewLibrary(layers []lora.Layer) *Library {
	return &Library{layers: layers, files: map[string]cached{}}
}

// Load returns the LoRA file at path, bound to the model (from the cache when unchanged).
func (l *Library) Load(path string) (*lora.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("LoRA %s cannot be read: %v", path, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("LoRA %s is a folder; give a .safetensors file", path)
	}
	l.mu.Lock()
	c, ok := l.files[path]
	l.mu.Unlock()
	if ok && c.size == st.Size() && c.modTime == st.ModTime().UnixNano() {
		return c.f, nil
	}
	f, err := lora.Open(path, l.layers)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.files[path] = cached{f, st.Size(), st.ModTime().UnixNano()}
	l.mu.Unlock()
	return f, nil
}

// Applied is a loaded LoRA at a strength.
type Applied struct {
	File     *lora.File
	Strength float64
}

// ForModel is the list as the denoiser takes it.
func ForModel(as []Applied) []qi21.LoRA {
	var out []qi21.LoRA
	for _, a := range as {
		out = append(out, qi21.LoRA{Adapter: a.File.Adapter, Strength: float32(a.Strength)})
	}
	return out
}

// Refs is the list as an image records it.
func Refs(as []Applied) []imagefile.LoRARef {
	var out []imagefile.LoRARef
	for _, a := range as {
		out = append(out, imagefile.LoRARef{Name: filepath.Base(a.File.Path), SHA256: a.File.SHA256, ShortHash: a.File.ShortHash, Strength: a.Strength})
	}
	return out
}

// Find looks for the LoRA files refs name: among known (files already listed, e.g. the window's
// LoRA list), then in dirs (in order) a file of the recorded name, then any .safetensors file;
// each is accepted only if its SHA-256 is the recorded one. found[i] is the path of refs[i], or
// "" when it is missing.
func Find(refs []imagefile.LoRARef, known, dirs []string) (found []string, missing []imagefile.LoRARef) {
	found = make([]string, len(refs))
	hash := fileHash
	for i, r := range refs {
		for _, p := range known {
			if hash(p) == r.SHA256 {
				found[i] = p
				break
			}
		}
		if found[i] != "" {
			continue
		}
		for _, d := range dirs {
			if p := filepath.Join(d, filepath.Base(r.Name)); hash(p) == r.SHA256 {
				found[i] = p
				break
			}
		}
		if found[i] != "" {
			continue
		}
	search:
		for _, d := range dirs {
			entries, _ := os.ReadDir(d)
			for _, e := range entries {
				if e.Type().IsRegular() && strings.EqualFold(filepath.Ext(e.Name()), ".safetensors") {
					if p := filepath.Join(d, e.Name()); hash(p) == r.SHA256 {
						found[i] = p
						break search
					}
				}
			}
		}
		if found[i] == "" {
			missing = append(missing, r)
		}
	}
	return found, missing
}

// MissingSentence says which LoRAs were not found, for the user.
func MissingSentence(missing []imagefile.LoRARef, dirs []string) string {
	if len(missing) == 0 {
		return ""
	}
	var names []string
	for _, m := range missing {
		names = append(names, fmt.Sprintf("%s (sha256 %.12s…)", m.Name, m.SHA256))
	}
	return fmt.Sprintf("the image was made with LoRAs that are not in %s: %s; put them there to restore them", strings.Join(dirs, " or "), strings.Join(names, ", "))
}

// fileHash is a file's SHA-256, remembered while its size and modification time stay the same
// ("" when it cannot be read).
func fileHash(path string) string {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return ""
	}
	key := hashKey{path, st.Size(), st.ModTime().UnixNano()}
	hashCache.Lock()
	h, ok := hashCache.m[key]
	hashCache.Unlock()
	if ok {
		return h
	}
	h, err = fileSHA256(path)
	if err != nil {
		return ""
	}
	hashCache.Lock()
	hashCache.m[key] = h
	hashCache.Unlock()
	return h
}

type hashKey struct {
	path          string
	size, modTime int64
}

var hashCache = struct {
	sync.Mutex
	m map[hashKey]string
}{m: map[hashKey]string{}}

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

// PresetSettings turns a LoRA's preset into a request's sampling settings over the model's
// scheduler configuration base: its steps and CFG, and for "turbo" the fixed grid under
// TurboConfig, for "lightning" base with dynamic exponential shifting and no terminal stretch.
func PresetSettings(p *lora.Preset, base sched.Config) (steps int, cfg float64, sigmas []float64, scheduler *sched.Config) {
	steps, cfg = p.Steps, p.CFG
	switch p.Schedule {
	case "turbo":
		c := sched.TurboConfig()
		sigmas = p.Sigmas
		if sigmas == nil {
			sigmas = sched.TurboSampleSigmas()
		}
		steps, scheduler = 0, &c
	case "lightning":
		c := base
		c.UseDynamicShifting, c.TimeShiftType, c.ShiftTerminal = true, "exponential", 0
		scheduler = &c
	}
	return steps, cfg, sigmas, scheduler
}

// FirstPreset is the preset of the first LoRA that has one, or nil.
func FirstPreset(as []Applied) *lora.Preset {
	for _, a := range as {
		if a.File.Preset != nil && a.Strength != 0 {
			return a.File.Preset
		}
	}
	return nil
}
