package cli

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"easel/engine/ml/cpu"
	"easel/engine/published"
	"easel/engine/quant"
	"easel/engine/qwen3vl"
)

// easel bench describe: the text encoder writing on the CPU — the prefill, the decode rate, and
// the weight bytes each token reads against this machine's memory bandwidth measured in the same
// run with a copy loop. A token reads every projection of every layer and the language head once,
// so bytes per token ÷ seconds per token is the rate the decode streams weights at; the copy
// loop's rate is what the memory system gives.

const benchDescribeUsage = `usage: easel bench describe (--model M.cmf | --synthetic) [flags]
  --model M.cmf       a converted model (its text encoder and language head)
  --synthetic         the published text encoder at full size with random q8 weights, built in
                      memory (about 8.2 GB with all 36 layers; no vision tower, so a text prompt)
  --layers N          with --synthetic: build only the first N layers (default: all)
  --prompt-tokens N   the prompt's length in tokens (default 64)
  --tokens N          tokens to write and time (default 16)
  --json              print the report as JSON`

// describeBenchReport is `easel bench describe --json`.
type describeBenchReport struct {
	Model              string  `json:"model"`
	Synthetic          bool    `json:"synthetic"`
	Layers             int     `json:"layers"`
	Cores              int     `json:"cores"`
	PromptTokens       int     `json:"prompt_tokens"`
	Tokens             int     `json:"tokens"`
	PrefillSeconds     float64 `json:"prefill_s"`
	TokenMS            float64 `json:"median_token_ms"`
	TokensPerSecond    float64 `json:"tokens_per_s"`
	WeightBytesToken   int64   `json:"weight_bytes_per_token"`
	StreamGBs          float64 `json:"decode_weight_gb_per_s"`
	CopyGBs            float64 `json:"copy_gb_per_s"`         // bytes copied per second (each read once, written once)
	CopyTrafficGBs     float64 `json:"copy_traffic_gb_per_s"` // read + write, STREAM's convention
	RatioToCopy        float64 `json:"ratio_to_copy"`
	RatioToCopyTraffic float64 `json:"ratio_to_copy_traffic"`
	Goal               float64 `json:"goal_ratio"`
}

func benchDescribe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench describe", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	model := fs.String("model", "", "")
	synthetic := fs.Bool("synthetic", false, "")
	layers := fs.Int("layers", 0, "")
	promptTokens := fs.Int("prompt-tokens", 64, "")
	tokens := fs.Int("tokens", 16, "")
	asJSON := fs.Bool("json", false, "")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "easel bench describe: %v\n\n%s\n", err, benchDescribeUsage)
		return ExitUsage
	}
	if (*model == "") == !*synthetic || *tokens < 2 || *promptTokens < 1 || *layers < 0 {
		fmt.Fprintf(stderr, "easel bench describe: give --model M.cmf or --synthetic (one of them), at least 2 --tokens and 1 --prompt-tokens\n\n%s\n", benchDescribeUsage)
		return ExitUsage
	}
	var src quant.Source
	rep := &describeBenchReport{Model: *model, Synthetic: *synthetic, Cores: runtime.GOMAXPROCS(0), PromptTokens: *promptTokens, Tokens: *tokens, Goal: 0.6}
	if *synthetic {
		s, err := newSyntheticTextEncoder(*layers)
		if err != nil {
			fmt.Fprintf(stderr, "easel bench describe: %v\n", err)
			return ExitFailure
		}
		src, rep.Model = s, "synthetic text encoder (published shapes, q8_2f)"
	} else {
		m, f := openModel(*model)
		if f != nil {
			fmt.Fprintf(stderr, "easel bench describe: %v\n", f.err)
			return f.code
		}
		defer m.Close()
		src = m
	}
	ctx, stop := interruptContext()
	defer stop()
	if err := runDescribeBench(ctx, src, rep); err != nil {
		fmt.Fprintf(stderr, "easel bench describe: %v\n", err)
		if ctx.Err() != nil {
			return ExitCancelled
		}
		if errors.Is(err, qwen3vl.ErrNoLanguageHead) {
			return ExitModelInvalid
		}
		return ExitFailure
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
		return ExitOK
	}
	fmt.Fprintf(stdout, "describe bench: %s, %d layers, %d cores\n", rep.Model, rep.Layers, rep.Cores)
	fmt.Fprintf(stdout, "prefill of %d tokens %.2f s; %d tokens at %.1f ms each (median), %.2f tokens/s\n", rep.PromptTokens, rep.PrefillSeconds, rep.Tokens, rep.TokenMS, rep.TokensPerSecond)
	fmt.Fprintf(stdout, "weights read per token %.2f GB → %.2f GB/s; copy loop %.2f GB/s copied (%.2f GB/s read + write)\n",
		float64(rep.WeightBytesToken)/1e9, rep.StreamGBs, rep.CopyGBs, rep.CopyTrafficGBs)
	fmt.Fprintf(stdout, "decode / copy rate %.2f (goal ≥ %.1f); / copy traffic %.2f\n", rep.RatioToCopy, rep.Goal, rep.RatioToCopyTraffic)
	return ExitOK
}

// runDescribeBench measures the copy loop, warms the weights with a short run, then times a
// prefill and the tokens.
func runDescribeBench(ctx context.Context, src quant.Source, rep *describeBenchReport) error {
	enc, err := qwen3vl.NewEncoder(cpu.New(), src)
	if err != nil {
		return err
	}
	tc := enc.TextConfig()
	rep.Layers = tc.Layers
	if rep.WeightBytesToken, err = decodeWeightBytes(src, tc); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ids := make([]int32, rep.PromptTokens)
	for i := range ids {
		ids[i] = int32(rng.IntN(150000))
	}
	// Once through, so a file's weights are in memory (not on disk) when the timed run reads them.
	if _, err := enc.Generate(ctx, ids[:1], nil, qwen3vl.GenerateOptions{MaxTokens: 2}); err != nil {
		return err
	}
	// Between two tokens the copy loop runs once, outside the token's time, so the two rates are
	// sampled under the same load from the rest of the machine; each is the median of its samples.
	c := newCopyLoop()
	var per, copies []float64
	last := time.Now()
	g, err := enc.Generate(ctx, ids, nil, qwen3vl.GenerateOptions{MaxTokens: rep.Tokens, OnToken: func(int32) error {
		per = append(per, time.Since(last).Seconds())
		copies = append(copies, c.rate())
		last = time.Now()
		return nil
	}})
	if err != nil {
		return err
	}
	med := median(per[1:]) // the first ends the prefill and its token
	rep.PrefillSeconds = g.Prefill.Seconds()
	rep.TokenMS = med * 1e3
	rep.TokensPerSecond = 1 / med
	rep.StreamGBs = float64(rep.WeightBytesToken) / med / 1e9
	copyRate := median(copies)
	rep.CopyGBs, rep.CopyTrafficGBs = copyRate/1e9, 2*copyRate/1e9
	rep.RatioToCopy = rep.StreamGBs / rep.CopyGBs
	rep.RatioToCopyTraffic = rep.StreamGBs / rep.CopyTrafficGBs
	return nil
}

// decodeWeightBytes is what one token reads of the weights: every layer's projections and the
// language head (lm_head, or the whole embedding when tied), norms aside.
func decodeWeightBytes(src quant.Source, tc qwen3vl.TextConfig) (int64, error) {
	var n int64
	for l := range tc.Layers {
		for _, p := range []string{"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"} {
			t, err := src.Tensor(fmt.Sprintf("te.layers.%d.%s.weight", l, p))
			if err != nil || t == nil {
				return 0, fmt.Errorf("te.layers.%d.%s.weight: %v", l, p, err)
			}
			n += int64(len(t.Data))
		}
	}
	head, err := src.Tensor("te.lm_head.weight")
	if err != nil || head == nil {
		if head, err = src.Tensor("te.embed_tokens.weight"); err != nil {
			return 0, err
		}
	}
	return n + int64(len(head.Data)), nil
}

// copyLoop copies 256 MB on every core; rate is one copy's bytes per second.
type copyLoop struct{ src, dst []byte }

func newCopyLoop() *copyLoop {
	const size = 256 << 20
	c := &copyLoop{src: make([]byte, size), dst: make([]byte, size)}
	for i := 0; i < size; i += 4096 {
		c.src[i], c.dst[i] = 1, 1 // touch every page before timing
	}
	return c
}

func (c *copyLoop) rate() float64 {
	start := time.Now()
	parallelCopy(c.dst, c.src)
	return float64(len(c.src)) / time.Since(start).Seconds()
}

// median of a non-empty list (sorted in place).
func median(v []float64) float64 {
	slices.Sort(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

// parallelCopy copies src into dst in one contiguous piece per core.
func parallelCopy(dst, src []byte) {
	workers := runtime.GOMAXPROCS(0)
	chunk := (len(src) + workers - 1) / workers
	done := make(chan struct{}, workers)
	for lo := 0; lo < len(src); lo += chunk {
		hi := min(lo+chunk, len(src))
		go func() { copy(dst[lo:hi], src[lo:hi]); done <- struct{}{} }()
	}
	for lo := 0; lo < len(src); lo += chunk {
		<-done
	}
}

// syntheticTextEncoder is the published text encoder at full size with random weights, in
// memory: q8_2f projections and head, a q8_row embedding, unit norms. Its random codes are
// uniform int8 with row scales that give each output about unit variance.
type syntheticTextEncoder struct {
	tensors map[string]*quant.Tensor
}

func (s *syntheticTextEncoder) Tensor(name string) (*quant.Tensor, error) {
	if t, ok := s.tensors[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("no tensor %q in the synthetic text encoder", name)
}

func newSyntheticTextEncoder(layers int) (*syntheticTextEncoder, error) {
	var cfg struct {
		Text map[string]any `json:"text_config"`
	}
	if err := json.Unmarshal(published.File(published.TextEncoderPath), &cfg); err != nil {
		return nil, err
	}
	if layers > 0 {
		cfg.Text["num_hidden_layers"] = layers
	}
	raw, err := json.Marshal(cfg.Text)
	if err != nil {
		return nil, err
	}
	tc, err := qwen3vl.ParseTextConfig(raw)
	if err != nil {
		return nil, err
	}
	s := &syntheticTextEncoder{tensors: map[string]*quant.Tensor{"te.config_json": {Name: "te.config_json", DType: quant.U8, Shape: []int{len(raw)}, Data: raw}}}
	rng := rand.New(rand.NewPCG(7, 8))
	add := func(name string, d quant.DType, shape ...int) {
		size, _ := quant.PayloadSize(d, shape)
		data := make([]byte, size)
		t := &quant.Tensor{Name: name, DType: d, Shape: shape, Data: data}
		s.tensors[name] = t
		if d == quant.F32 { // a norm: ones
			for i := 0; i < len(data); i += 4 {
				binary.LittleEndian.PutUint32(data[i:], math.Float32bits(1))
			}
			return
		}
		rows, cols := shape[0], shape[1]
		codes := data[:rows*cols]
		for i := 0; i+8 <= len(codes); i += 8 {
			binary.LittleEndian.PutUint64(codes[i:], rng.Uint64())
		}
		scale := quant.Float32ToHalf(float32(1 / (73.9 * math.Sqrt(float64(cols))))) // uniform int8 has σ ≈ 73.9
		for r := range rows {
			binary.LittleEndian.PutUint16(data[rows*cols+2*r:], scale)
		}
		if d == quant.Q8_2F {
			one := quant.Float32ToHalf(1)
			for c := range cols {
				binary.LittleEndian.PutUint16(data[rows*cols+2*rows+2*c:], one)
			}
		}
	}
	D, qw, kvw := tc.Hidden, tc.Heads*tc.HeadDim, tc.KVHeads*tc.HeadDim
	add("te.embed_tokens.weight", quant.Q8Row, tc.Vocab, D)
	for l := range tc.Layers {
		p := fmt.Sprintf("te.layers.%d.", l)
		add(p+"input_layernorm.weight", quant.F32, D)
		add(p+"post_attention_layernorm.weight", quant.F32, D)
		add(p+"self_attn.q_norm.weight", quant.F32, tc.HeadDim)
		add(p+"self_attn.k_norm.weight", quant.F32, tc.HeadDim)
		add(p+"self_attn.q_proj.weight", quant.Q8_2F, qw, D)
		add(p+"self_attn.k_proj.weight", quant.Q8_2F, kvw, D)
		add(p+"self_attn.v_proj.weight", quant.Q8_2F, kvw, D)
		add(p+"self_attn.o_proj.weight", quant.Q8_2F, D, qw)
		add(p+"mlp.gate_proj.weight", quant.Q8_2F, tc.Intermediate, D)
		add(p+"mlp.up_proj.weight", quant.Q8_2F, tc.Intermediate, D)
		add(p+"mlp.down_proj.weight", quant.Q8_2F, D, tc.Intermediate)
	}
	add("te.norm.weight", quant.F32, D)
	add("te.lm_head.weight", quant.Q8_2F, tc.Vocab, D)
	return s, nil
}
