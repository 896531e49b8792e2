package qwen3vl

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"easel/engine/quant"
	"easel/internal/golden"
)

// The first step's distribution under the instruct model's sampling defaults (repetition penalty
// 1.05, temperature 0.7, top-k 20, top-p 0.8, as each case's sampling_0 names them) keeps the
// tokens the reference kept, with its probabilities.
func TestGoldenSamplingDistribution(t *testing.T) {
	paths, err := golden.Cases("generate")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no generate_* cases in the golden directory")
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".safetensors"), func(t *testing.T) {
			c := loadCase(t, p)
			m, _ := c.Meta["sampling_0"].(map[string]any)
			num := func(k string) float64 {
				v, ok := m[k].(float64)
				if !ok {
					t.Fatalf("%s: sampling_0 has no number %q", c.Name, k)
				}
				return v
			}
			s := Sampling{RepetitionPenalty: num("repetition_penalty"), Temperature: num("temperature"), TopK: int(num("top_k")), TopP: num("top_p")}
			sp := newSampler(s, 0, int32s(t, c, "input_ids"))
			logits := float32s(t, c, "logits_0")
			sp.penalize(logits)
			ids, probs := sp.distribution(logits)
			wantIDs := int32s(t, c, "sampling_probs_0_ids")
			wantP := float32s(t, c, "sampling_probs_0")
			got := make([]int32, len(ids))
			for i, id := range ids {
				got[i] = int32(id)
			}
			slices.Sort(wantIDs)
			order := slices.Clone(got)
			slices.Sort(order)
			if !slices.Equal(order, wantIDs) {
				t.Fatalf("tokens kept %v, want %v", got, wantIDs)
			}
			for j, id := range got {
				k := slices.Index(int32s(t, c, "sampling_probs_0_ids"), id)
				if math.Abs(probs[j]-float64(wantP[k])) > 1e-6 {
					t.Errorf("token %d: probability %.7f, want %.7f", id, probs[j], wantP[k])
				}
			}
		})
	}
}

// Top-k keeps the k largest and anything tied with the k-th; top-p then keeps the smallest head
// whose probability passes p; temperature scales before both.
func TestSamplingWarpers(t *testing.T) {
	logits := []float32{1, 3, 2, 3, 0, 2}
	sp := newSampler(Sampling{Temperature: 1, TopK: 3}, 0, nil)
	ids, _ := sp.distribution(slices.Clone(logits))
	if !slices.Equal(ids, []int{1, 3, 2, 5}) {
		t.Errorf("top-3 with a tie at the third: %v, want [1 3 2 5]", ids)
	}
	// Softmax of {3, 3, 2, 2, 1, 0}: the two 3s hold 0.61 together, so top-p 0.6 keeps them only.
	sp = newSampler(Sampling{Temperature: 1, TopP: 0.6}, 0, nil)
	ids, probs := sp.distribution(slices.Clone(logits))
	if !slices.Equal(ids, []int{1, 3}) || math.Abs(probs[0]-0.5) > 1e-12 {
		t.Errorf("top-p 0.6: %v %v, want [1 3] at 0.5 each", ids, probs)
	}
	// A tiny temperature leaves the largest alone once top-p is applied.
	sp = newSampler(Sampling{Temperature: 0.01, TopP: 0.9}, 0, nil)
	if ids, _ := sp.distribution([]float32{1, 3, 2.9}); !slices.Equal(ids, []int{1}) {
		t.Errorf("temperature 0.01, top-p 0.9: %v, want [1]", ids)
	}
	// The penalty divides positive and multiplies negative logits of seen tokens, once each.
	sp = newSampler(Sampling{RepetitionPenalty: 2}, 0, []int32{0, 1, 1})
	l := []float32{4, -4, 4}
	sp.penalize(l)
	if !slices.Equal(l, []float32{2, -8, 4}) {
		t.Errorf("penalty 2 over tokens {0, 1}: %v, want [2 -8 4]", l)
	}
	for _, bad := range []Sampling{{Temperature: -1}, {TopK: -1}, {TopP: 1.5}, {RepetitionPenalty: -1}} {
		if bad.Check() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// textPrompt is a short prompt of real token ids from the tiny model's vocabulary.
var textPrompt = []int32{151644, 872, 198, 64, 8251, 151645, 198, 151644, 77091, 198}

// A seed repeats its text; other seeds draw other text; greedy ignores the seed.
func TestGenerateSeedRepeatsItsText(t *testing.T) {
	enc := newTinyEncoder(t)
	gen := func(s Sampling, seed uint64) []int32 {
		g, err := enc.Generate(context.Background(), textPrompt, nil, GenerateOptions{MaxTokens: 12, Sampling: s, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return g.IDs
	}
	hot := Sampling{Temperature: 50}
	a, b := gen(hot, 7), gen(hot, 7)
	if !slices.Equal(a, b) {
		t.Errorf("seed 7 twice: %v then %v", a, b)
	}
	differs := false
	for s := uint64(8); s < 12 && !differs; s++ {
		differs = !slices.Equal(gen(hot, s), a)
	}
	if !differs {
		t.Errorf("seeds 8–11 at temperature 50 all drew seed 7's tokens %v", a)
	}
	if g1, g2 := gen(Sampling{}, 1), gen(Sampling{}, 2); !slices.Equal(g1, g2) {
		t.Errorf("greedy decoding depends on the seed: %v vs %v", g1, g2)
	}
}

// A stop token ends generation and is part of it; the token limit ends it otherwise.
func TestGenerateStopsAtAStopToken(t *testing.T) {
	enc := newTinyEncoder(t)
	g, err := enc.Generate(context.Background(), textPrompt, nil, GenerateOptions{MaxTokens: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.IDs) != 8 || g.Stopped {
		t.Fatalf("no stop token: %d tokens, stopped %v; want 8 at the limit", len(g.IDs), g.Stopped)
	}
	stop := g.IDs[3]
	first := slices.Index(g.IDs, stop)
	g2, err := enc.Generate(context.Background(), textPrompt, nil, GenerateOptions{MaxTokens: 8, Stop: []int32{stop}})
	if err != nil {
		t.Fatal(err)
	}
	if !g2.Stopped || !slices.Equal(g2.IDs, g.IDs[:first+1]) {
		t.Errorf("stop at %d: %v (stopped %v), want %v", stop, g2.IDs, g2.Stopped, g.IDs[:first+1])
	}
}

// Cancelling at any token stops there with the context's error and the tokens so far.
func TestGenerateStopsWhenCancelled(t *testing.T) {
	enc := newTinyEncoder(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	g, err := enc.Generate(ctx, textPrompt, nil, GenerateOptions{MaxTokens: 20, OnToken: func(int32) error {
		if n++; n == 3 {
			cancel()
		}
		return nil
	}})
	if !errors.Is(err, context.Canceled) || g == nil || len(g.IDs) != 3 {
		t.Errorf("cancelled at the third token: %v, %v", g, err)
	}
}

// hideNames is a source without some tensors, as a file converted before they were kept.
type hideNames struct {
	quant.Source
	hidden []string
}

func (h hideNames) Tensor(name string) (*quant.Tensor, error) {
	if slices.Contains(h.hidden, name) {
		return nil, errors.New("no tensor " + name)
	}
	return h.Source.Tensor(name)
}

// A file without the language head still encodes; asking it to write says in one sentence what
// it lacks and how to get it.
func TestGenerateWithoutTheHeadSaysWhatToDo(t *testing.T) {
	enc, err := NewEncoder(newTinyEncoder(t).backend, hideNames{openHFTextEncoder(t), []string{"te.norm.weight", "te.lm_head.weight"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enc.Encode(context.Background(), textPrompt, nil); err != nil {
		t.Errorf("encoding without the head: %v", err)
	}
	_, err = enc.Generate(context.Background(), textPrompt, nil, GenerateOptions{MaxTokens: 4})
	if !errors.Is(err, ErrNoLanguageHead) || !strings.Contains(err.Error(), "easel convert") || strings.Count(err.Error(), ". ") > 0 {
		t.Errorf("generating without the head: %v", err)
	}
	info, err := DescribeHead(hideNames{openHFTextEncoder(t), []string{"te.norm.weight"}})
	if err != nil || info.Present || !info.Tied {
		t.Errorf("head of the tied tiny model without its norm: %+v, %v", info, err)
	}
}
