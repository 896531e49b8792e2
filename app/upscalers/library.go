package upscalers

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"easel/app/settings"
	"easel/engine/upscale"
)

// Entry is one file of the library.
type Entry struct {
	// Name is the file's name without its extension: what A1111 clients list and send.
	Name string
	Path string
	Size int64
	// Config is the network read from the file, nil when Err says why the file is not one.
	Config *upscale.Config
	Err    error
}

// Scale is the network's scale (0 for a file that is not an upscaler).
func (e Entry) Scale() int {
	if e.Config == nil {
		return 0
	}
	return e.Config.Scale
}

// Licence is what is known of the file's terms, for the window and the README's advice: Real-ESRGAN's
// own weights are BSD-3-Clause; other files carry their authors' terms.
func (e Entry) Licence() string {
	n := strings.ToLower(e.Name)
	if strings.HasPrefix(n, "realesrgan") || strings.HasPrefix(n, "realesr-") || strings.HasPrefix(n, "realesrnet") {
		return "Real-ESRGAN's weights: BSD-3-Clause"
	}
	return "unknown: community upscalers carry their authors' terms, often CC BY-NC-SA (no commercial use); check where the file came from"
}

// Library is a folder of upscaler files.
type Library struct {
	Dir string

	mu    sync.Mutex
	known map[string]cached // by path: the detection of a file at its size and time
}

type cached struct {
	size  int64
	mtime time.Time
	cfg   *upscale.Config
	err   error
}

// Default is the library in Easel's data folder (settings.UpscalersDir).
func Default() (*Library, error) {
	dir, err := settings.UpscalersDir()
	if err != nil {
		return nil, err
	}
	return New(dir), nil
}

// New is the library of the folder dir (which need not exist yet).
func New(dir string) *Library { return &Library{Dir: dir, known: map[string]cached{}} }

// IsUpscalerFile says whether a file name has an extension the library lists.
func IsUpscalerFile(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".pth", ".safetensors":
		return true
	}
	return false
}

// List is every .pth and .safetensors file of the folder, sorted by name, with what each is (files
// that are not upscalers Easel runs are listed with their Err). A missing folder is an empty list.
func (l *Library) List() ([]Entry, error) {
	ents, err := os.ReadDir(l.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the upscalers folder %s cannot be read: %w", l.Dir, err)
	}
	var out []Entry
	for _, d := range ents {
		if d.IsDir() || !IsUpscalerFile(d.Name()) || strings.HasPrefix(d.Name(), ".") {
			continue
		}
		out = append(out, l.entry(filepath.Join(l.Dir, d.Name())))
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name) })
	return out, nil
}

// Usable is List without the files that are not upscalers Easel runs.
func (l *Library) Usable() ([]Entry, error) {
	all, err := l.List()
	var out []Entry
	for _, e := range all {
		if e.Err == nil {
			out = append(out, e)
		}
	}
	return out, err
}

// Find is the usable entry named name (case-insensitive; a file name with its extension works too).
func (l *Library) Find(name string) (Entry, bool) {
	es, _ := l.Usable()
	want := strings.ToLower(strings.TrimSpace(name))
	for _, e := range es {
		if strings.ToLower(e.Name) == want || strings.ToLower(filepath.Base(e.Path)) == want {
			return e, true
		}
	}
	return Entry{}, false
}

// entry detects the network of a file, cached while its size and time stay the same.
func (l *Library) entry(path string) Entry {
	e := Entry{Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), Path: path}
	st, err := os.Stat(path)
	if err != nil {
		e.Err = err
		return e
	}
	e.Size = st.Size()
	l.mu.Lock()
	c, ok := l.known[path]
	l.mu.Unlock()
	if !ok || c.size != st.Size() || !c.mtime.Equal(st.ModTime()) {
		c = cached{size: st.Size(), mtime: st.ModTime()}
		c.cfg, c.err = detect(path)
		l.mu.Lock()
		l.known[path] = c
		l.mu.Unlock()
	}
	e.Config, e.Err = c.cfg, c.err
	return e
}

func detect(path string) (*upscale.Config, error) {
	s, err := upscale.ReadState(path)
	if err != nil {
		return nil, err
	}
	cfg, _, err := upscale.Detect(s)
	if err != nil {
		return nil, fmt.Errorf("upscaler %s: %w", filepath.Base(path), err)
	}
	return cfg, nil
}

// Inspect says what the file at path is, without adding it: the window shows this when a file is
// dropped and asks before Add. A file that is not an upscaler Easel runs is an error with its sentence.
func Inspect(path string) (Entry, error) {
	e := Entry{Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), Path: path}
	if !IsUpscalerFile(path) {
		return e, fmt.Errorf("%s: Easel's upscalers are .pth and .safetensors files", filepath.Base(path))
	}
	st, err := os.Stat(path)
	if err != nil {
		return e, err
	}
	e.Size = st.Size()
	e.Config, e.Err = detect(path)
	return e, e.Err
}

// Add copies an upscaler file into the folder (after Inspect and the artist's yes) and returns its
// entry. A file that is not an upscaler is refused; a different file of the same name is not
// overwritten: the copy gets " 2", " 3", … after its name. The copy is written beside and renamed,
// so a failed copy leaves nothing half-written.
func (l *Library) Add(path string) (Entry, error) {
	if _, err := Inspect(path); err != nil {
		return Entry{}, err
	}
	if err := os.MkdirAll(l.Dir, 0o755); err != nil {
		return Entry{}, fmt.Errorf("the upscalers folder %s cannot be made: %w", l.Dir, err)
	}
	base, ext := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), strings.ToLower(filepath.Ext(path))
	dst := filepath.Join(l.Dir, base+ext)
	for i := 2; ; i++ {
		if same, err := sameFile(path, dst); err != nil || same {
			if same {
				return l.entry(dst), nil
			}
			break
		}
		dst = filepath.Join(l.Dir, fmt.Sprintf("%s %d%s", base, i, ext))
	}
	if err := copyFile(path, dst); err != nil {
		return Entry{}, err
	}
	return l.entry(dst), nil
}

// sameFile reports whether dst exists with the same bytes as src; an error means dst does not exist.
func sameFile(src, dst string) (bool, error) {
	a, err := os.Stat(dst)
	if err != nil {
		return false, err
	}
	b, err := os.Stat(src)
	if err != nil || a.Size() != b.Size() {
		return false, nil
	}
	x, err := os.ReadFile(src)
	if err != nil {
		return false, nil
	}
	y, err := os.ReadFile(dst)
	if err != nil {
		return false, nil
	}
	return string(x) == string(y), nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".adding-*")
	if err != nil {
		return fmt.Errorf("copying %s into the upscalers folder: %w", filepath.Base(src), err)
	}
	if _, err = io.Copy(tmp, in); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("copying %s into the upscalers folder: %w (nothing was added)", filepath.Base(src), err)
	}
	return nil
}

// Chosen is the upscaler the settings name (settings.Settings.Upscaler: the gallery's Upscale and
// the hi-res pass's first stage), when it is in the folder and usable; false means Lanczos (none
// chosen, or the file went away or broke: Entry.Err then says why when it is still listed).
func (l *Library) Chosen(s settings.Settings) (Entry, bool) {
	if s.Upscaler == "" {
		return Entry{}, false
	}
	return l.Find(s.Upscaler)
}
