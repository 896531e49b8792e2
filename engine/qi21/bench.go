package qi21

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"easel/engine/lora"
	"easel/engine/ml"
	"easel/engine/quant"
)

// BlockBench is one measured block: its geometry, codec, per-repetition times and per-class time.
type BlockBench struct {
	Codec      string             `json:"codec"`
	TargetRows int                `json:"target_rows"`
	PrefixRows int                `json:"prefix_rows"`
	Reps       []float64          `json:"reps_ms"`
	Median     time.Duration      `json:"-"`
	MedianMS   float64            `json:"median_ms"`
	CPU        time.Duration      `json:"-"`
	CPUMS      float64            `json:"median_cpu_ms"`
	GemmFlops  float64            `json:"gemm_flop"`
	AttnFlops  float64            `json:"attn_flop"`
	GFLOPs     float64            `json:"gflop_per_s"`
	ClassMS    map[string]float64 `json:"class_ms_per_block"`
}

// BlockFlops is the floating-point work of one block over n target rows against p prefix rows:
// the seven projections (2·n·(4D² + 3·D·F)) and attention (4·n·(p+n)·D).
func BlockFlops(c Config, n, p int) (gemm, attn float64) {
	D, F := float64(c.Hidden()), float64(c.MLPHidden())
	return 2 * float64(n) * (4*D*D + 3*D*F), 4 * float64(n) * float64(p+n) * D
}

// randomWeight encodes a [rows, cols] matrix of N(0, 0.02²) values in codec d without ever
// holding it in float32.
func randomWeight(name string, d quant.DType, rows, cols int, seed uint64) (*quant.Tensor, error) {
	size, ok := quant.PayloadSize(d, []int{rows, cols})
	if !ok {
		return nil, fmt.Errorf("qi21 bench: %v cannot hold [%d, %d]", d, rows, cols)
	}
	payload := make([]byte, size)
	src := func(r0, r1 int, dst []float32) error {
		rng := rand.New(rand.NewPCG(seed, uint64(r0)))
		for i := range dst[:(r1-r0)*cols] {
			dst[i] = float32(0.02 * rng.NormFloat64())
		}
		return nil
	}
	if err := quant.EncodeFrom(d, []int{rows, cols}, src, payload); err != nil {
		return nil, err
	}
	return &quant.Tensor{Name: name, DType: d, Shape: []int{rows, cols}, Data: payload}, nil
}

// NewRandomBlockModel is a one-block model of geometry c whose block projections are random
// weights in codec d (the top-level weights are absent: only block runs work).
func NewRandomBlockModel(c Config, d quant.DType, be ml.Backend) (*Model, error) {
	c.Layers = 1
	if err := c.check(); err != nil {
		return nil, err
	}
	D, F := c.Hidden(), c.MLPHidden()
	m := &Model{Config: c, be: be, Blocks: make([]Block, 1)}
	blk := &m.Blocks[0]
	var err error
	for i, w := range []struct {
		dst        **quant.Tensor
		rows, cols int
	}{{&blk.ToQ, D, D}, {&blk.ToK, D, D}, {&blk.ToV, D, D}, {&blk.ToOut, D, D}, {&blk.Gate, F, D}, {&blk.Up, F, D}, {&blk.Down, D, F}} {
		if *w.dst, err = randomWeight("bench."+strconv.Itoa(i), d, w.rows, w.cols, uint64(i+1)); err != nil {
			return nil, err
		}
	}
	ones := make([]float32, c.HeadDim)
	for i := range ones {
		ones[i] = 1
	}
	if blk.NormQ, err = be.Upload(ones, c.HeadDim); err != nil {
		return nil, err
	}
	if blk.NormK, err = be.Upload(ones, c.HeadDim); err != nil {
		return nil, err
	}
	return m, nil
}

// BlockModel is a one-block model over block l of m (the same weights, not copied; the top-level
// weights are absent: only block runs work), for timing the block's kernels on the model's own
// shapes and codec (the first-use autotuner). It returns nil when l is out of range.
func (m *Model) BlockModel(l int) *Model {
	if l < 0 || l >= len(m.Blocks) {
		return nil
	}
	c := m.Config
	c.Layers = 1
	return &Model{Config: c, be: m.be, Blocks: m.Blocks[l : l+1 : l+1]}
}

// BenchBlock runs the model's first block reps times over n target rows (random activations,
// a random σ modulation) against p random prefix rows of cached K/V, as one denoising step does.
// cpuClock, when not nil, reads the process CPU time, reported beside wall time.
func (m *Model) BenchBlock(n, p, reps int, cpuClock func() time.Duration) (*BlockBench, error) {
	c := m.Config
	D := c.Hidden()
	rng := rand.New(rand.NewPCG(7, 7))
	rnd := func(k int, scale float64) []float32 {
		v := make([]float32, k)
		for i := range v {
			v[i] = float32(scale * rng.NormFloat64())
		}
		return v
	}
	e := ml.NewScope(m.be)
	md := &modulation{all: e.Upload(rnd(4*D, 0.1), 1, 4*D)}
	chunk := func(i int) ml.Tensor {
		v, err := m.be.Slice(md.all, i*D, D)
		e.Do(err)
		return v
	}
	md.scale1, md.gate1, md.scale2, md.gate2 = chunk(0), chunk(1), chunk(2), chunk(3)
	positions := make([][]int, n)
	for i := range positions {
		positions[i] = []int{p, i/32 - 16, i%32 - 16}
	}
	ps := &pass{
		rows:    n,
		groups:  []group{{0, n, md}},
		rope:    m.ropeFor(e, positions),
		prefixK: []ml.Tensor{e.Upload(rnd(p*D, 1), p, D)},
		prefixV: []ml.Tensor{e.Upload(rnd(p*D, 1), p, D)},
		s:       newScratch(e, c, n),
	}
	x0 := rnd(n*D, 1)
	if e.Err() != nil {
		return nil, e.Err()
	}
	gemm, attn := BlockFlops(c, n, p)
	r := &BlockBench{Codec: m.Blocks[0].ToQ.DType.String(), TargetRows: n, PrefixRows: p, GemmFlops: gemm, AttnFlops: attn, ClassMS: map[string]float64{}}
	times := make([]time.Duration, 0, reps)
	cpuTimes := make([]time.Duration, 0, reps)
	if cpuClock == nil {
		cpuClock = func() time.Duration { return 0 }
	}
	tm := m.be.Timings()
	for i := 0; i < max(1, reps); i++ {
		ps.x = e.Upload(x0, n, D)
		tm.Reset()
		start, startCPU := time.Now(), cpuClock()
		m.block(e, 0, ps)
		if _, err := m.be.Download(ps.s.y); err != nil {
			return nil, err
		}
		times = append(times, time.Since(start))
		cpuTimes = append(cpuTimes, cpuClock()-startCPU)
		if e.Err() != nil {
			return nil, e.Err()
		}
		for cl, ct := range tm.Snapshot() {
			if ct.Ops > 0 {
				r.ClassMS[ml.Class(cl).String()] += float64(ct.Time.Microseconds()) / 1e3 / float64(max(1, reps))
			}
		}
		r.Reps = append(r.Reps, float64(times[i].Microseconds())/1e3)
	}
	r.Median, r.CPU = median(times), median(cpuTimes)
	r.MedianMS, r.CPUMS = float64(r.Median.Microseconds())/1e3, float64(r.CPU.Microseconds())/1e3
	r.GFLOPs = (gemm + attn) / r.Median.Seconds() / 1e9
	return r, nil
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// RandomBlockLoRA is a LoRA of the given rank on every projection of block 0 of geometry c, with
// bf16 factors (as published LoRAs store them) of random values, for benchmarks.
func RandomBlockLoRA(c Config, rank int) (*lora.Adapter, error) {
	if rank < 1 {
		return nil, fmt.Errorf("qi21 bench: LoRA rank %d: choose at least 1", rank)
	}
	a := &lora.Adapter{}
	one := c
	one.Layers = 1
	for i, l := range LinearLayers(one) {
		if !strings.HasPrefix(l.Name, "transformer_blocks.0.") {
			continue
		}
		A, err := randomWeight(l.Name+".lora_A", quant.BF16, rank, l.In, uint64(100+i))
		if err != nil {
			return nil, err
		}
		B, err := randomWeight(l.Name+".lora_B", quant.BF16, l.Out, rank, uint64(200+i))
		if err != nil {
			return nil, err
		}
		a.Factors = append(a.Factors, lora.Factor{Layer: l.Name, A: A, B: B, Rank: rank, Scale: 1})
	}
	return a, nil
}

// BlockLoRAFlops is the work a rank-r LoRA on all seven projections adds to one block over n
// rows: 2·n·r·(in + out) per projection.
func BlockLoRAFlops(c Config, n, r int) float64 {
	D, F := float64(c.Hidden()), float64(c.MLPHidden())
	return 2 * float64(n) * float64(r) * (4*2*D + 3*(D+F))
}
