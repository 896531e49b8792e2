// Package golden finds and reads the reference cases that parity tests compare against: the
// outputs of the official implementation on a tiny model (see testdata/golden/README.md).
//
// A case is a safetensors file whose description is JSON in the metadata under the key "json".
// Cases are looked up in the directory named by EASEL_GOLDEN_DIR, or testdata/golden/ at the
// module root when that variable is unset.
package golden

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"easel/engine/safetensors"
)

// EnvDir is the environment variable that points tests at another directory of cases.
const EnvDir = "EASEL_GOLDEN_DIR"

// Dir is the directory of reference cases: $EASEL_GOLDEN_DIR, or testdata/golden at the module root.
func Dir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return "", fmt.Errorf("%s=%q is not a directory", EnvDir, d)
		}
		return d, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "testdata", "golden"), nil
}

// ModuleRoot walks up from the working directory to the folder holding go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory: run the tests inside the Easel module")
		}
		dir = parent
	}
}

// Cases lists the case files of one kind ("dit", "vae", "pipeline", "textenc", ...): every
// "<kind>_*.safetensors" in the golden directory, sorted.
func Cases(kind string) ([]string, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	paths, err := filepath.Glob(filepath.Join(dir, kind+"_*.safetensors"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	return paths, nil
}

// RefCases lists the cases of one kind whose reference file sits beside other files of the case
// (the upscalers' weights): every "<kind>_*.ref.safetensors" in the golden directory, sorted. Their
// description is JSON under the metadata key "meta".
func RefCases(kind string) ([]string, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	paths, err := filepath.Glob(filepath.Join(dir, kind+"_*.ref.safetensors"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	return paths, nil
}

// Path is a file in the golden directory (e.g. "scheduler_cases.json").
func Path(name string) (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// ModelSnapshot is the tiny Hugging Face snapshot: the one folder in the golden directory that
// holds a model_index.json.
func ModelSnapshot() (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if _, err := os.Stat(filepath.Join(p, "model_index.json")); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no model snapshot (a folder with model_index.json) in %s", dir)
}

// Case is one reference case: its tensors and its JSON description.
type Case struct {
	Name string // file name without extension, e.g. "dit_t2i"
	Path string
	Meta map[string]any
	file *safetensors.File
}

// Load opens a case file. Close it when done.
func Load(path string) (*Case, error) {
	f, err := safetensors.Open(path)
	if err != nil {
		return nil, err
	}
	c := &Case{Name: strings.TrimSuffix(filepath.Base(path), ".safetensors"), Path: path, file: f, Meta: map[string]any{}}
	for _, key := range []string{"json", "meta"} {
		js, ok := f.Metadata[key]
		if !ok {
			continue
		}
		if err := json.Unmarshal([]byte(js), &c.Meta); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: metadata key %q is not a JSON object: %v", path, key, err)
		}
		break
	}
	return c, nil
}

// Close releases the case's mapping.
func (c *Case) Close() error { return c.file.Close() }

// Names lists the case's tensors.
func (c *Case) Names() []string { return c.file.Names() }

// Has reports whether the case holds the named tensor.
func (c *Case) Has(name string) bool { return c.file.Tensor(name) != nil }

// Tensor returns the raw tensor or an error naming the case.
func (c *Case) Tensor(name string) (*safetensors.Tensor, error) {
	t := c.file.Tensor(name)
	if t == nil {
		return nil, fmt.Errorf("case %s has no tensor %q (it has %v)", c.Name, name, c.Names())
	}
	return t, nil
}

// Shape is the named tensor's shape, or nil when it is missing.
func (c *Case) Shape(name string) []int {
	if t := c.file.Tensor(name); t != nil {
		return t.Shape
	}
	return nil
}

// Float32s decodes the named tensor to float32 along with its shape.
func (c *Case) Float32s(name string) ([]float32, []int, error) {
	t, err := c.Tensor(name)
	if err != nil {
		return nil, nil, err
	}
	v, err := t.Float32s()
	return v, t.Shape, err
}

// Int64s decodes the named integer tensor along with its shape.
func (c *Case) Int64s(name string) ([]int64, []int, error) {
	t, err := c.Tensor(name)
	if err != nil {
		return nil, nil, err
	}
	v, err := t.Int64s()
	return v, t.Shape, err
}

// RelErr is ‖got − want‖ / ‖want‖ (the parity measure the issues use), in float64.
func RelErr(got, want []float32) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	var num, den float64
	for i := range want {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

// MaxAbsErr is max |got − want|.
func MaxAbsErr(got, want []float32) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	m := 0.0
	for i := range want {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if d > m || math.IsNaN(d) {
			m = d
		}
	}
	return m
}
