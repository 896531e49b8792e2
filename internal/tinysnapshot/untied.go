package tinysnapshot

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"easel/engine/safetensors"
	"easel/internal/golden"
)

// Permutation is a text-generation case's lm_head_permutation: the untied language head's row i
// is the embedding's row (i·A + B) mod vocab.
type Permutation struct{ A, B int }

// CasePermutation reads a case's lm_head_permutation metadata; ok is false when it has none.
func CasePermutation(c *golden.Case) (p Permutation, ok bool) {
	m, _ := c.Meta["lm_head_permutation"].(map[string]any)
	a, okA := m["a"].(float64)
	b, okB := m["b"].(float64)
	if !okA || !okB {
		return Permutation{}, false
	}
	return Permutation{A: int(a), B: int(b)}, true
}

// Untied writes, in the test's temporary folder, a copy of the tiny snapshot whose text encoder
// has its own language head: lm_head.weight[i] = embed_tokens.weight[(i·A + B) mod vocab] (rows
// copied in their stored dtype, nothing rounded) and tie_word_embeddings false at the top level
// and in text_config. The other components are linked, not copied. It returns the folder.
func Untied(tb testing.TB, p Permutation) string {
	tb.Helper()
	snap, err := golden.ModelSnapshot()
	if err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(tb.TempDir(), filepath.Base(snap)+"-untied")
	if err := os.MkdirAll(filepath.Join(dir, "text_encoder"), 0o755); err != nil {
		tb.Fatal(err)
	}
	entries, err := os.ReadDir(snap)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "text_encoder" {
			continue
		}
		if err := os.Symlink(filepath.Join(snap, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			tb.Fatal(err)
		}
	}

	var cfg map[string]any
	if err := json.Unmarshal(readFile(tb, filepath.Join(snap, "text_encoder", "config.json")), &cfg); err != nil {
		tb.Fatalf("text_encoder/config.json: %v", err)
	}
	cfg["tie_word_embeddings"] = false
	if tc, ok := cfg["text_config"].(map[string]any); ok {
		tc["tie_word_embeddings"] = false
	}
	raw, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "text_encoder", "config.json"), raw, 0o644); err != nil {
		tb.Fatal(err)
	}

	f, err := safetensors.Open(filepath.Join(snap, "text_encoder", "model.safetensors"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var tensors []*safetensors.Tensor
	for _, n := range f.Names() {
		tensors = append(tensors, f.Tensor(n))
	}
	embed := f.Tensor("model.language_model.embed_tokens.weight")
	if embed == nil || len(embed.Shape) != 2 {
		tb.Fatal("the tiny text encoder has no 2-D model.language_model.embed_tokens.weight")
	}
	vocab := embed.Shape[0]
	row := len(embed.Data) / vocab
	head := make([]byte, len(embed.Data))
	for i := range vocab {
		src := (i*p.A + p.B) % vocab
		copy(head[i*row:(i+1)*row], embed.Data[src*row:(src+1)*row])
	}
	tensors = append(tensors, &safetensors.Tensor{Name: "lm_head.weight", DType: embed.DType, Shape: embed.Shape, Data: head})
	if err := safetensors.WriteFile(filepath.Join(dir, "text_encoder", "model.safetensors"), tensors, nil); err != nil {
		tb.Fatal(err)
	}
	return dir
}
