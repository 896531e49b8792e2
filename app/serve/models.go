package serve

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"easel/engine/cmf"
	"easel/engine/pipeline"
)

// modelState is the model jobs run with and the folder sd_model_checkpoint chooses among. Names
// are file names (tiny.cmf) or their stems (tiny); a request never gives a path.
type modelState struct {
	dir string
	set func(string)

	mu       sync.Mutex
	path     string
	defaults pipeline.Defaults
}

func newModelState(path, dir string, set func(string)) (*modelState, error) {
	if path == "" {
		return nil, fmt.Errorf("serve: no model file: give --model M.cmf (or set one up in the window)")
	}
	if dir == "" {
		dir = filepath.Dir(path)
	}
	m := &modelState{dir: dir, set: set}
	d, err := readDefaults(path)
	if err != nil {
		return nil, err
	}
	m.path, m.defaults = path, d
	return m, nil
}

// readDefaults opens a model file only to read its generation defaults.
func readDefaults(path string) (pipeline.Defaults, error) {
	f, err := cmf.Open(path)
	if err != nil {
		return pipeline.Defaults{}, err
	}
	defer f.Close()
	d, err := pipeline.ReadDefaults(f)
	if err != nil {
		return pipeline.Defaults{}, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return d, nil
}

// current is the model's file name and defaults.
func (m *modelState) current() (name, path string, d pipeline.Defaults) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return filepath.Base(m.path), m.path, m.defaults
}

// list is the folder's model files (file names, sorted), the current one included.
func (m *modelState) list() []string {
	names := map[string]bool{}
	cur, _, _ := m.current()
	names[cur] = true
	if entries, err := os.ReadDir(m.dir); err == nil {
		for _, e := range entries {
			if !e.IsDir() && strings.EqualFold(filepath.Ext(e.Name()), ".cmf") {
				names[e.Name()] = true
			}
		}
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// stem is a model's name without its extension (A1111's model_name).
func stem(name string) string { return strings.TrimSuffix(name, filepath.Ext(name)) }

// find is the path of the folder's model called name (its file name, its stem, or A1111's title
// "NAME [hash]"), found among the folder's files by comparison, never joined from the name.
func (m *modelState) find(name string) (string, error) {
	want := strings.TrimSpace(name)
	if i := strings.LastIndex(want, " ["); i > 0 && strings.HasSuffix(want, "]") {
		want = want[:i]
	}
	cur, path, _ := m.current()
	if want == cur || want == stem(cur) {
		return path, nil
	}
	found := ""
	for _, n := range m.list() {
		if n == want || stem(n) == want {
			found = n
		}
	}
	if found == "" {
		return "", fmt.Errorf("model %q not found: /sdapi/v1/sd-models lists the models of this server's folder", name)
	}
	return filepath.Join(m.dir, found), nil
}

// currentPath is the current model's path.
func (m *modelState) currentPath() string {
	_, p, _ := m.current()
	return p
}

// choose switches to the model called name (find).
func (m *modelState) choose(name string) error {
	path, err := m.find(name)
	if err != nil {
		return err
	}
	cur, curPath, _ := m.current()
	if path == curPath {
		return nil
	}
	if m.set == nil {
		return fmt.Errorf("this server cannot switch models (it serves %s)", cur)
	}
	d, err := readDefaults(path)
	if err != nil {
		return fmt.Errorf("model %s cannot be used: %v", filepath.Base(path), err)
	}
	m.mu.Lock()
	m.path, m.defaults = path, d
	m.mu.Unlock()
	m.set(path)
	return nil
}
