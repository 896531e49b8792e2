package golden

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
)

// DebugCases lists the per-stage intermediates of one kind ("dit", "vae", "textenc"):
// debug/debug_<kind>_*.safetensors in the golden directory, sorted. debug/ is optional: a folder
// without it has none, which is not an error.
func DebugCases(kind string) ([]string, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	paths, err := filepath.Glob(filepath.Join(dir, "debug", "debug_"+kind+"_*.safetensors"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	return paths, nil
}

// subjectName is the case file name at the start of a debug case's "case" metadata:
// "dit_ti2i_two", or "pipeline_ti2i_two, positive prompt (te0_* inputs)".
var subjectName = regexp.MustCompile(`^\s*([A-Za-z0-9_.-]+)`)

// Subject is the case a debug case describes, by file name without extension, read from its
// "case" metadata.
func (c *Case) Subject() (string, error) {
	s, _ := c.Meta["case"].(string)
	m := subjectName.FindStringSubmatch(s)
	if m == nil {
		return "", fmt.Errorf("debug case %s: metadata \"case\" is %q, want the name of the case it describes", c.Name, s)
	}
	return m[1], nil
}

// LoadSubject opens the case a debug case describes (in the same golden directory). Close it
// when done.
func (c *Case) LoadSubject() (*Case, error) {
	name, err := c.Subject()
	if err != nil {
		return nil, err
	}
	path, err := Path(name + ".safetensors")
	if err != nil {
		return nil, err
	}
	ref, err := Load(path)
	if err != nil {
		return nil, fmt.Errorf("debug case %s describes case %s: %w", c.Name, name, err)
	}
	return ref, nil
}

// IsVendored reports whether the golden directory is the repository's own testdata/golden (not
// another folder named by EASEL_GOLDEN_DIR). Files generated from the vendored cases (for
// example a fitted asset) can only be compared with a fresh result on that folder.
func IsVendored() (bool, error) {
	dir, err := Dir()
	if err != nil {
		return false, err
	}
	root, err := ModuleRoot()
	if err != nil {
		return false, err
	}
	a, errA := filepath.EvalSymlinks(dir)
	b, errB := filepath.EvalSymlinks(filepath.Join(root, "testdata", "golden"))
	if errA != nil || errB != nil {
		return filepath.Clean(dir) == filepath.Join(root, "testdata", "golden"), nil
	}
	return a == b, nil
}
