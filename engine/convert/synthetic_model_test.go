package convert

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"easel/engine/cmf"
	"easel/engine/published"
	"easel/engine/quant"
)

// WriteSynthetic at the tiny snapshot's configs writes the same directory (names, codecs,
// shapes; order is a writer convention) as converting the tiny snapshot, a sound file, and the same bytes twice.
func TestSyntheticMatchesAConversion(t *testing.T) {
	dir := tinySnapshot(t)
	configs, tok := readSnapshotFiles(t, dir)
	tmp := t.TempDir()
	converted := filepath.Join(tmp, "converted.cmf")
	if _, err := Convert(context.Background(), dir, converted, Options{}); err != nil {
		t.Fatal(err)
	}
	var sums []uint64
	for _, name := range []string{"a.cmf", "b.cmf"} {
		out := filepath.Join(tmp, name)
		if _, err := WriteSynthetic(context.Background(), out, SyntheticOptions{Configs: configs, Tokenizer: tok}); err != nil {
			t.Fatal(err)
		}
		syn, err := cmf.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := syn.Verify(nil); err != nil {
			t.Fatal(err)
		}
		if !IsSynthetic(syn.Header()) {
			t.Error("the header does not say the file is synthetic")
		}
		ref, err := cmf.Open(converted)
		if err != nil {
			t.Fatal(err)
		}
		describe := func(f *cmf.File) []string {
			var d []string
			for _, e := range f.Entries() {
				if e.DType != quant.U8 {
					d = append(d, fmt.Sprint(e.Name, " ", e.DType, e.Shape))
				}
			}
			return d
		}
		got, want := describe(syn), describe(ref)
		slices.Sort(got)
		slices.Sort(want)
		for _, g := range got {
			if !slices.Contains(want, g) {
				t.Errorf("synthetic but not converted: %s", g)
			}
		}
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("converted but not synthetic: %s", w)
			}
		}
		var h uint64
		for _, e := range syn.Entries() {
			h = h*31 + e.Hash
		}
		sums = append(sums, h)
		// Every weight decodes finite, norms are 1, and a projection has the planned scale.
		for _, e := range syn.Entries() {
			if e.DType == quant.U8 {
				continue
			}
			tn, _ := syn.Tensor(e.Name)
			v, err := quant.Dequantize(tn)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("%s holds %v", e.Name, x)
				}
			}
		}
		q, _ := syn.Tensor("dit.transformer_blocks.0.attn.to_q.weight")
		v, _ := quant.Dequantize(q)
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		if std, want := math.Sqrt(ss/float64(len(v))), 1/math.Sqrt(float64(q.Cols())); math.Abs(std-want)/want > 0.1 {
			t.Errorf("to_q has standard deviation %.4f, want about 1/sqrt(fan_in) = %.4f", std, want)
		}
		syn.Close()
		ref.Close()
	}
	if sums[0] != sums[1] {
		t.Error("two synthetic files from the same seed differ")
	}
}

// EnsureSynthetic writes the model once, keeps a complete one, and replaces a damaged one.
func TestEnsureSyntheticKeepsACompleteFileAndReplacesADamagedOne(t *testing.T) {
	dir := tinySnapshot(t)
	configs, tok := readSnapshotFiles(t, dir)
	opts := SyntheticOptions{Configs: configs, Tokenizer: tok}
	path := filepath.Join(t.TempDir(), "synthetic.cmf")
	for i, want := range []bool{true, false} {
		wrote, err := EnsureSynthetic(context.Background(), path, opts)
		if err != nil || wrote != want {
			t.Fatalf("call %d: wrote %v, %v; want wrote %v", i+1, wrote, err, want)
		}
	}
	st, _ := os.Stat(path)
	if err := os.Truncate(path, st.Size()/2); err != nil {
		t.Fatal(err)
	}
	if wrote, err := EnsureSynthetic(context.Background(), path, opts); err != nil || !wrote {
		t.Fatalf("after truncating the file: wrote %v, %v; want it written again", wrote, err)
	}
	f, err := cmf.Open(path)
	if err != nil {
		t.Fatalf("the rewritten file does not open: %v", err)
	}
	f.Close()
}

// readSnapshotFiles reads a snapshot's small config files (by path in the snapshot, as
// PublishedConfigs gives them) and its tokenizer.json.
func readSnapshotFiles(t *testing.T, dir string) (configs map[string][]byte, tokenizer []byte) {
	t.Helper()
	configs = map[string][]byte{}
	for rel := range published.Files() {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		configs[rel] = b
	}
	tokenizer, err := os.ReadFile(filepath.Join(dir, "processor", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	return configs, tokenizer
}
