package history

import (
	"fmt"
	"image"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"easel/app/imagefile"
)

// Entry is one past image.
type Entry struct {
	Path string
	// Settings are what the PNG says made it; nil for a PNG from another tool.
	Settings *imagefile.Settings
	// Thumb is a small copy (at most ThumbSide on its long side) for lists.
	Thumb   image.Image
	ModTime time.Time
	// Session is true for images made since the app started.
	Session bool
}

// ThumbSide is the long side of history thumbnails, in pixels.
const ThumbSide = 96

// MaxScanned is how many of the output folder's newest PNGs Scan reads.
const MaxScanned = 60

// Store is the history of one output folder. It is safe for concurrent use.
type Store struct {
	Folder string

	mu      sync.Mutex
	session []Entry // newest first
}

// New is the history of folder.
func New(folder string) *Store { return &Store{Folder: folder} }

// Save writes a finished image with its settings into the output folder under a new name made
// from the time and the seed, and adds it to the session.
func (s *Store) Save(img *image.NRGBA, set *imagefile.Settings, now time.Time) (Entry, error) {
	name := fmt.Sprintf("easel-%s-seed%d.png", now.Format("20060102-150405"), set.Seed)
	if set.Grid != nil { // a grid of cells, not an image of one seed
		name = fmt.Sprintf("easel-%s-grid.png", now.Format("20060102-150405"))
	}
	path := filepath.Join(s.Folder, name)
	for i := 2; exists(path); i++ {
		path = filepath.Join(s.Folder, strings.TrimSuffix(name, ".png")+fmt.Sprintf("-%d.png", i))
	}
	if err := os.MkdirAll(s.Folder, 0o755); err != nil {
		return Entry{}, fmt.Errorf("cannot create the output folder %s: %w (choose another folder in Settings)", s.Folder, err)
	}
	if err := imagefile.WriteFile(path, img, set); err != nil {
		return Entry{}, err
	}
	copied := *set
	e := Entry{Path: path, Settings: &copied, Thumb: Thumbnail(img, ThumbSide), ModTime: now, Session: true}
	s.mu.Lock()
	s.session = append([]Entry{e}, s.session...)
	s.mu.Unlock()
	return e, nil
}

// Session is this session's images, newest first.
func (s *Store) Session() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.session)
}

// Scan reads the output folder's newest PNGs (at most MaxScanned), newest first, leaving out the
// session's own. Files it cannot read are reported in errs and skipped; a missing folder is an
// empty history.
func (s *Store) Scan() (entries []Entry, errs []error) {
	des, err := os.ReadDir(s.Folder)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{fmt.Errorf("cannot list the output folder %s: %w", s.Folder, err)}
	}
	type file struct {
		path string
		mod  time.Time
	}
	var files []file
	for _, de := range des {
		if de.IsDir() || !strings.EqualFold(filepath.Ext(de.Name()), ".png") || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue
		}
		files = append(files, file{filepath.Join(s.Folder, de.Name()), info.ModTime()})
	}
	slices.SortFunc(files, func(a, b file) int { return b.mod.Compare(a.mod) })
	if len(files) > MaxScanned {
		files = files[:MaxScanned]
	}
	s.mu.Lock()
	own := map[string]bool{}
	for _, e := range s.session {
		own[e.Path] = true
	}
	s.mu.Unlock()
	for _, f := range files {
		if own[f.path] {
			continue
		}
		e, err := Read(f.path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		e.ModTime = f.mod
		entries = append(entries, e)
	}
	return entries, errs
}

// Read loads one PNG's settings and thumbnail.
func Read(path string) (Entry, error) {
	md, err := imagefile.ReadFile(path)
	if err != nil {
		return Entry{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return Entry{}, fmt.Errorf("cannot open %s: %w", path, err)
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		return Entry{}, fmt.Errorf("%s is not a readable PNG: %v", filepath.Base(path), err)
	}
	return Entry{Path: path, Settings: md.Settings, Thumb: Thumbnail(img, ThumbSide)}, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
