// Package settings keeps the choices an artist makes once — which model file, which backend,
// where images go, the default size and steps — in a small JSON file in the app-support folder,
// written atomically so a crash or a full disk never leaves a half-written file behind.
package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// Backend is the compute backend the user asked for.
type Backend string

// The backend choices. Auto picks Metal on Apple silicon and falls back to the CPU when Metal
// declines (not enough memory, no device).
const (
	BackendAuto  Backend = "auto"
	BackendMetal Backend = "metal"
	BackendCPU   Backend = "cpu"
)

// PreviewMode is how the live preview is drawn.
type PreviewMode string

// The preview modes. Fast projects every step's latents to colours (one pixel per 16×16 block);
// Sharp also decodes every k-th step through the real VAE at reduced resolution, with k chosen
// so it costs under 5 % of the step time.
const (
	PreviewFast  PreviewMode = "fast"
	PreviewSharp PreviewMode = "sharp"
)

// Settings are the persisted preferences. The zero value is not meaningful: start from Defaults.
type Settings struct {
	Model        string  `json:"model"`         // path of the .cmf model file ("" until the first run sets it up)
	Backend      Backend `json:"backend"`       // auto, metal or cpu
	OutputFolder string  `json:"output_folder"` // where generated PNGs are written
	Width        int     `json:"width"`         // default output size
	Height       int     `json:"height"`
	Steps        int     `json:"steps"` // default number of denoising steps
	CFG          float64 `json:"cfg"`   // default guidance scale (1 = off)
	// Preview is the live preview's mode ("" in files written before it existed means fast).
	Preview PreviewMode `json:"preview,omitempty"`
	// Share is "Share this Mac" (off by default): the window serves the AUTOMATIC1111 API
	// (app/serve) on ShareAddr ("" = DefaultShareAddr), its jobs on the window's queue; other
	// machines need ShareToken, which the window makes when sharing starts without one.
	Share      bool   `json:"share,omitempty"`
	ShareAddr  string `json:"share_addr,omitempty"`
	ShareToken string `json:"share_token,omitempty"`
	// RenderOn is where the window's jobs run: "" this Mac, else host:port (or a URL) of another
	// Easel that shares, with its token RenderToken.
	RenderOn    string `json:"render_on,omitempty"`
	RenderToken string `json:"render_token,omitempty"`
	// NoGPUTuning turns off tuning the Metal kernels for this Mac on first use of each geometry
	// class (choices already cached still run); the zero value tunes.
	NoGPUTuning bool `json:"no_gpu_tuning,omitempty"`
	// AllowIdleSleep lets the Mac idle-sleep while a job runs; the zero value holds an activity
	// assertion that keeps it awake (app/activity; the lid still sleeps it).
	AllowIdleSleep bool `json:"allow_idle_sleep,omitempty"`
	// CheckImages asks the text encoder after every finished image whether each element its
	// prompt names is in it (app/textgen Check); off by default: it costs a writing per image.
	CheckImages bool `json:"check_images,omitempty"`
	// Upscaler is the learned upscaler the gallery's Upscale and the hi-res pass's first stage
	// use: a file name (without extension) in the upscalers folder (UpscalersDir); "" is Lanczos.
	Upscaler string `json:"upscaler,omitempty"`
	// Studio is what the window's Studio dialog was last given (the hub's address and pairing,
	// rendering on it, lending this Mac to it), so the next launch starts from it; its token is
	// a secret and lives in Secrets, not here.
	Studio Studio `json:"studio,omitzero"`
}

// Studio is the remembered studio: the hub's address and pairing fingerprint, and whether the
// window renders its jobs there and lends this Mac to it.
type Studio struct {
	Hub    string `json:"hub,omitempty"`
	Pin    string `json:"pin,omitempty"`
	Render bool   `json:"render,omitempty"`
	Lend   bool   `json:"lend,omitempty"`
}

// DefaultShareAddr is where "Share this Mac" listens: every interface, A1111's port (the token is
// required).
const DefaultShareAddr = "0.0.0.0:7860"

// Defaults are the settings of a fresh install: the model's own defaults (1024², 40 steps, CFG off)
// and images in ImagesDir (the history folder).
func Defaults() Settings {
	return Settings{
		Backend:      BackendAuto,
		Preview:      PreviewFast,
		OutputFolder: defaultOutputFolder(),
		Width:        1024,
		Height:       1024,
		Steps:        40,
		CFG:          1,
	}
}

// defaultOutputFolder is ImagesDir, or a folder in the temporary directory when there is no home
// to put it in (the Settings dialog shows it, and the artist can choose another).
func defaultOutputFolder() string {
	dir, err := ImagesDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "Easel", "Images")
	}
	return dir
}

// Validate checks the values an artist or a hand-edited file could get wrong.
func (s Settings) Validate() error {
	switch s.Backend {
	case BackendAuto, BackendMetal, BackendCPU:
	default:
		return fmt.Errorf("backend %q is not one of auto, metal, cpu", s.Backend)
	}
	switch s.Preview {
	case "", PreviewFast, PreviewSharp:
	default:
		return fmt.Errorf("preview %q is not one of fast, sharp", s.Preview)
	}
	if s.Width < 256 || s.Height < 256 || s.Width > 4096 || s.Height > 4096 || s.Width%32 != 0 || s.Height%32 != 0 {
		return fmt.Errorf("default size %d×%d must be between 256 and 4096 pixels a side, in multiples of 32", s.Width, s.Height)
	}
	if s.Steps < 1 || s.Steps > 200 {
		return fmt.Errorf("default steps %d must be between 1 and 200", s.Steps)
	}
	if s.CFG < 1 || s.CFG > 20 {
		return fmt.Errorf("default CFG scale %g must be between 1 (off) and 20", s.CFG)
	}
	if s.OutputFolder == "" {
		return errors.New("the output folder is not set")
	}
	return nil
}

// Dir is Easel's app-support folder: ~/Library/Application Support/Easel on macOS,
// $XDG_CONFIG_HOME/Easel (usually ~/.config/Easel) on Linux. Models downloaded by the app go to
// its models/ subfolder.
func Dir() (string, error) {
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("cannot find the app-support folder: %w (set $HOME)", err)
	}
	return filepath.Join(base, "Easel"), nil
}

// Store reads and writes settings in one file.
type Store struct {
	Path string
}

// DefaultStore is the settings file in the app-support folder.
func DefaultStore() (*Store, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	return &Store{Path: filepath.Join(dir, "settings.json")}, nil
}

// Load reads the settings. A missing file gives Defaults. Keys absent from the file keep their
// default values; a file that cannot be parsed or holds invalid values is an error that names it
// (the caller may then offer to reset it), never silently replaced.
func (st *Store) Load() (Settings, error) {
	s := Defaults()
	b, err := os.ReadFile(st.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("reading settings %s: %w", st.Path, err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return Defaults(), fmt.Errorf("settings file %s is damaged (%v): fix it or delete it to start from the defaults", st.Path, err)
	}
	if err := s.Validate(); err != nil {
		return Defaults(), fmt.Errorf("settings file %s: %w; fix it or delete it to start from the defaults", st.Path, err)
	}
	return s, nil
}

// Save validates and writes the settings atomically: a temporary file in the same folder, synced,
// then renamed over the old one.
func (st *Store) Save(s Settings) error {
	if err := s.Validate(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(st.Path, append(b, '\n'))
}

// WriteFileAtomic writes data to path through a temporary file in the same folder, so readers see
// the old content or the new, never a mixture; on any error the temporary file is removed.
func WriteFileAtomic(path string, data []byte) error { return writeFileAtomicMode(path, data, 0o644) }

// writeFileAtomicMode is WriteFileAtomic giving the file mode (0o600: only the user reads it).
func writeFileAtomicMode(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w (is the disk full?)", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if runtime.GOOS != "windows" {
		if err := os.Chmod(tmp, mode); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
