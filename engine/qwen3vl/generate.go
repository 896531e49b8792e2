package qwen3vl

import (
	"context"
	"fmt"
	"time"

	"easel/engine/ml"
)

// GenerateOptions steer Generate.
type GenerateOptions struct {
	MaxTokens int      // the most tokens to generate (> 0)
	Sampling  Sampling // the zero value is greedy decoding
	Seed      uint64   // the sampling's random stream (Easel's torch-compatible generator)
	// Stop ends generation after one of these tokens (it is part of the result); see StopTokens.
	Stop []int32
	// OnToken sees every generated token as it is chosen; an error from it stops generation.
	OnToken func(id int32) error
	// OnLogits sees each step's raw logits (before the penalty and warpers), for tests and tools;
	// it must not keep the slice.
	OnLogits func(step int, logits []float32)
}

// Generation is what Generate produced.
type Generation struct {
	IDs          []int32 // the generated tokens, a stop token included
	Stopped      bool    // true when a stop token ended it, false at the token limit
	PromptTokens int
	Prefill      time.Duration // the prompt (and images) through the model, to the first logits
	Decode       time.Duration // every later token
}

// TokensPerSecond is the decode rate after the first token.
func (g *Generation) TokensPerSecond() float64 {
	if len(g.IDs) < 2 || g.Decode <= 0 {
		return 0
	}
	return float64(len(g.IDs)-1) / g.Decode.Seconds()
}

// Generate continues a chat-templated prompt (ids, with one <|image_pad|> run per image in
// images, as BuildChat makes it) token by token: the prompt runs once through the model into a
// key/value cache, then every new token runs as one row at the next mRoPE position (after an
// image, text continues from the image's largest position + 1). Logits come from the final norm
// and the language head; the Sampling picks each token. ctx cancels between layers and tokens.
func (e *Encoder) Generate(ctx context.Context, ids []int32, images []VisionInput, opts GenerateOptions) (*Generation, error) {
	if opts.MaxTokens <= 0 {
		return nil, fmt.Errorf("generate: the token limit is %d; give a positive one", opts.MaxTokens)
	}
	if err := opts.Sampling.Check(); err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	head, err := e.languageHead()
	if err != nil {
		return nil, err
	}
	b := e.backend
	cache, err := newKVCache(b, e.text, len(ids)+opts.MaxTokens)
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	defer cache.free()

	start := time.Now()
	x, next, err := e.run(ctx, ids, images, cache)
	if err != nil {
		return nil, err
	}
	logits, err := e.logits(head, x, len(ids))
	b.Free(x)
	if err != nil {
		return nil, err
	}
	g := &Generation{PromptTokens: len(ids), Prefill: time.Since(start)}
	return g, decodeLoop(ctx, g, ids, logits, opts, func(id int32, step int) ([]float32, error) {
		return e.step(ctx, head, cache, id, next+step)
	})
}

// decodeLoop samples tokens into g from the prompt's logits on: each chosen token goes through
// step (the token and its index after the prompt) for the next logits, until a stop token or
// the limit. Generate and GenerateRows share it.
func decodeLoop(ctx context.Context, g *Generation, ids []int32, logits []float32, opts GenerateOptions, step func(id int32, step int) ([]float32, error)) (err error) {
	sp := newSampler(opts.Sampling, opts.Seed, ids)
	decodeStart := time.Now()
	defer func() { g.Decode = time.Since(decodeStart) }()
	for i := 0; ; i++ {
		if opts.OnLogits != nil {
			opts.OnLogits(i, logits)
		}
		id := sp.next(logits)
		g.IDs = append(g.IDs, id)
		if opts.OnToken != nil {
			if err := opts.OnToken(id); err != nil {
				return err
			}
		}
		for _, s := range opts.Stop {
			g.Stopped = g.Stopped || id == s
		}
		if g.Stopped || len(g.IDs) == opts.MaxTokens {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if logits, err = step(id, i); err != nil {
			return err
		}
	}
}

// step runs one token at position pos through the cached model and returns its logits.
func (e *Encoder) step(ctx context.Context, head *languageHead, cache *kvCache, id int32, pos int) ([]float32, error) {
	b, D := e.backend, e.text.Hidden
	host, err := e.lm.embed([]int32{id})
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	x, err := b.Upload(host, 1, D)
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	defer b.Free(x)
	cosT, sinT := mropeTables([][3]int{{pos, pos, pos}}, e.text.HeadDim, e.text.RopeTheta, e.text.MRopeSection)
	half := e.text.HeadDim / 2
	s := ml.NewScope(b)
	defer s.Release()
	cos, sin := s.Own(upload(s, cosT, 1, half)), s.Own(upload(s, sinT, 1, half))
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	if err := e.lm.forwardCached(ctx, x, 1, &ml.Rope{Cos: cos, Sin: sin, Pairs: ml.HalfSplit}, nil, cache); err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	return e.logits(head, x, 1)
}

func upload(s *ml.Scope, data []float32, shape ...int) ml.Tensor {
	t, err := s.B.Upload(data, shape...)
	s.Do(err)
	return t
}

// logits is the language head over the last of x's n rows: RMSNorm, then the projection.
func (e *Encoder) logits(head *languageHead, x ml.Tensor, n int) ([]float32, error) {
	b, D := e.backend, e.text.Hidden
	s := ml.NewScope(b)
	defer s.Release()
	last, err := b.Slice(x, (n-1)*D, 1, D)
	s.Do(err)
	h := s.Temp(1, D)
	out := s.Temp(1, e.text.Vocab)
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("language head: %w", err)
	}
	s.Do(b.RMSNorm(h, last, head.norm, e.text.RMSNormEps, false))
	s.Do(b.Linear(out, h, head.w))
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("language head: %w", err)
	}
	v, err := b.Download(out)
	if err != nil {
		return nil, fmt.Errorf("language head: %w", err)
	}
	return v, nil
}
