package qwen3vl

import (
	"fmt"
	"math"
	"slices"

	"easel/engine/seed"
)

// Sampling chooses each next token from the logits, as transformers' generate() does: the
// repetition penalty, then (when sampling) temperature, top-k and top-p, then a draw from the
// softmax. Temperature 0 is greedy decoding (argmax after the penalty).
type Sampling struct {
	Temperature float64 // 0: greedy
	TopK        int     // 0: off
	TopP        float64 // 1 or 0: off
	// RepetitionPenalty divides the positive logits and multiplies the negative ones of every
	// token already in the sequence (prompt and generated); 1 or 0: off.
	RepetitionPenalty float64
}

// DefaultSampling is Qwen3-VL-8B-Instruct's generation_config.json: temperature 0.7, top-k 20,
// top-p 0.8, no repetition penalty.
var DefaultSampling = Sampling{Temperature: 0.7, TopK: 20, TopP: 0.8, RepetitionPenalty: 1}

// Check says what is wrong with a setting.
func (s Sampling) Check() error {
	switch {
	case s.Temperature < 0 || math.IsNaN(s.Temperature):
		return fmt.Errorf("temperature %g: use 0 (greedy) or a positive value such as 0.7", s.Temperature)
	case s.TopK < 0:
		return fmt.Errorf("top-k %d: use 0 (off) or a positive count such as 20", s.TopK)
	case s.TopP < 0 || s.TopP > 1 || math.IsNaN(s.TopP):
		return fmt.Errorf("top-p %g: use a value in (0, 1], such as 0.8", s.TopP)
	case s.RepetitionPenalty < 0 || math.IsNaN(s.RepetitionPenalty):
		return fmt.Errorf("repetition penalty %g: use 1 (off) or a value such as 1.05", s.RepetitionPenalty)
	}
	return nil
}

// sampler applies a Sampling with its own random stream.
type sampler struct {
	s    Sampling
	rng  *seed.Generator
	seen map[int32]bool
	idx  []int // scratch for top-k / top-p
}

// newSampler starts from the prompt's tokens (the repetition penalty sees them too).
func newSampler(s Sampling, seedValue uint64, prompt []int32) *sampler {
	sp := &sampler{s: s, rng: seed.NewGenerator(seedValue), seen: map[int32]bool{}}
	for _, id := range prompt {
		sp.seen[id] = true
	}
	return sp
}

// next picks a token from logits (modified in place) and records it.
func (sp *sampler) next(logits []float32) int32 {
	sp.penalize(logits)
	var id int32
	if sp.s.Temperature == 0 {
		id = int32(argmax(logits))
	} else {
		id = sp.draw(logits)
	}
	sp.seen[id] = true
	return id
}

// penalize is RepetitionPenaltyLogitsProcessor: every token seen so far has its logit divided
// by the penalty when positive, multiplied when negative (once, however often it occurred).
func (sp *sampler) penalize(logits []float32) {
	p := float32(sp.s.RepetitionPenalty)
	if p <= 0 || p == 1 {
		return
	}
	for id := range sp.seen {
		if v := logits[id]; v < 0 {
			logits[id] = v * p
		} else {
			logits[id] = v / p
		}
	}
}

// argmax is the first index of the largest value (torch.argmax).
func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// draw is a multinomial draw from distribution(logits).
func (sp *sampler) draw(logits []float32) int32 {
	idx, probs := sp.distribution(logits)
	u := sp.rng.Float64()
	var acc float64
	for j := range probs {
		acc += probs[j]
		if u < acc {
			return int32(idx[j])
		}
	}
	return int32(idx[len(idx)-1])
}

// distribution applies temperature, top-k and top-p (transformers' warpers, in that order) to
// logits (modified in place) and returns the tokens left, most likely first, with their
// probabilities.
func (sp *sampler) distribution(logits []float32) ([]int, []float64) {
	s := sp.s
	if t := float32(s.Temperature); t > 0 && t != 1 {
		for i := range logits {
			logits[i] /= t
		}
	}
	idx := sp.candidates(logits)
	keep := len(idx)
	if s.TopK > 0 && s.TopK < keep {
		// TopKLogitsWarper removes what is below the k-th value; ties with it stay.
		kth := logits[idx[s.TopK-1]]
		keep = s.TopK
		for keep < len(idx) && logits[idx[keep]] >= kth {
			keep++
		}
	}
	probs := softmaxOf(logits, idx[:keep])
	if s.TopP > 0 && s.TopP < 1 {
		// TopPLogitsWarper: ascending cumulative probability; drop tokens while it stays
		// ≤ 1 − top_p, always keeping the most likely one.
		var cum float64
		drop := 0
		for j := keep - 1; j > 0; j-- {
			cum += probs[j]
			if cum > 1-s.TopP {
				break
			}
			drop++
		}
		keep -= drop
		probs = softmaxOf(logits, idx[:keep])
	}
	return idx[:keep], probs
}

// candidates are the token ids sorted by logit, largest first (ties by id). With top-k on, only
// the k largest (and any tied with the k-th) are sorted: the rest can never be drawn.
func (sp *sampler) candidates(logits []float32) []int {
	idx := sp.idx[:0]
	if k := sp.s.TopK; k > 0 && k < len(logits) {
		// The k-th largest value by a bounded selection, then every index at or above it.
		top := make([]float32, 0, k+1)
		for _, v := range logits {
			if len(top) == k && v <= top[k-1] {
				continue
			}
			j, _ := slices.BinarySearchFunc(top, v, func(a, b float32) int {
				switch {
				case a > b:
					return -1
				case a < b:
					return 1
				}
				return 0
			})
			top = slices.Insert(top, j, v)
			if len(top) > k {
				top = top[:k]
			}
		}
		kth := top[len(top)-1]
		for i, v := range logits {
			if v >= kth {
				idx = append(idx, i)
			}
		}
	} else {
		for i := range logits {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case logits[a] > logits[b]:
			return -1
		case logits[a] < logits[b]:
			return 1
		}
		return 0
	})
	sp.idx = idx
	return idx
}

// softmaxOf is the softmax over the logits of the listed indices, in that order.
func softmaxOf(logits []float32, idx []int) []float64 {
	out := make([]float64, len(idx))
	top := float64(logits[idx[0]])
	var sum float64
	for j, i := range idx {
		out[j] = math.Exp(float64(logits[i]) - top)
		sum += out[j]
	}
	for j := range out {
		out[j] /= sum
	}
	return out
}
