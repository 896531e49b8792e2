package tinymodel

import (
	"path/filepath"
	"slices"
	"testing"

	"easel/engine/cmf"
	"easel/engine/convert"
)

// headTensors are what converters before the language head was kept left out.
var headTensors = []string{"te.norm.weight", "te.lm_head.weight"}

// WithoutHead is Path(tb, opts) rewritten, in the test's temporary folder, without the language
// head (te.norm.weight, te.lm_head.weight): a file as converters before Easel could write text
// made it.
func WithoutHead(tb testing.TB, opts convert.Options) string {
	tb.Helper()
	f, err := cmf.Open(Path(tb, opts))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	out := filepath.Join(tb.TempDir(), "without-head.cmf")
	w, err := cmf.Create(out, cmf.Options{ExpectedTensors: len(f.Entries())})
	if err != nil {
		tb.Fatal(err)
	}
	defer w.Abort()
	for _, e := range f.Entries() {
		if slices.Contains(headTensors, e.Name) {
			continue
		}
		t, err := f.Tensor(e.Name)
		if err != nil {
			tb.Fatal(err)
		}
		if err := w.AddTensor(e.Name, e.DType, e.Shape, t.Data); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.SetHeader(*f.Header()); err != nil {
		tb.Fatal(err)
	}
	w.SetVocab(f.Vocab())
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return out
}
