package qi21metal

import (
	"context"
	"easel/engine/ml/metal"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
	"unsafe"

	"easel/engine/ml"
	"easel/engine/qi21"
	"easel/engine/quant"
	"easel/kernels/device"
)

// BlockBench is one transformer block timed on a device: wall time and the device's own time per
// repetition, and the process CPU time (on the emulator the CPU does the device's work, so CPU
// time is the emulator's cost, not a GPU's).
type BlockBench struct {
	Device     string    `json:"device"`
	Codec      string    `json:"codec"`
	TargetRows int       `json:"target_rows"`
	PrefixRows int       `json:"prefix_rows"`
	WallMS     []float64 `json:"reps_wall_ms"`
	MedianMS   float64   `json:"median_wall_ms"`
	DeviceMS   float64   `json:"median_device_ms"` // command-buffer time as the device reports it
	CPUMS      float64   `json:"cpu_ms_per_rep"`   // process CPU time per repetition; 0 without a clock
	GemmFlops  float64   `json:"gemm_flop"`
	AttnFlops  float64   `json:"attn_flop"`
	GFLOPs     float64   `json:"gflop_per_s"` // (gemm + attn) / median wall time
	// Gemm and Attn are the variants the block ran (docs/METAL.md §7).
	Gemm string `json:"gemm_variant"`
	Attn string `json:"attn_variant"`
	// GemmMS and AttnMS are the median device time of the block's GEMM and attention command
	// buffers (measured with one command buffer per op class); 0 unless BenchOptions.Profile.
	GemmMS float64 `json:"gemm_device_ms,omitempty"`
	AttnMS float64 `json:"attn_device_ms,omitempty"`

	out []float32 // the residual stream after the last repetition (for parity)
}

// BenchOptions choose what BenchBlockWith runs: the GEMM and attention variants ("" is the
// baseline), and Profile, which gives each op class its own command buffer so the device time
// per class is known (slower in all).
type BenchOptions struct {
	Gemm, Attn string
	Profile    bool
}

// BenchBlock runs block 0 of m (a one-block model such as qi21.NewRandomBlockModel builds) on dev
// reps times, as one denoising step runs it: the row op, then the block over n target rows
// against p cached prefix rows (zero K/V and random activations: the cost does not depend on the
// values). It first moves the block's weight payloads into one page-aligned buffer that stands
// for the model file's mapping, so the device reads them in place as it would from a .cmf.
// cpuClock, when not nil, reads the process CPU time.
func BenchBlock(dev device.Device, m *qi21.Model, n, p, reps int, cpuClock func() time.Duration) (*BlockBench, error) {
	return BenchBlockWith(dev, m, n, p, reps, cpuClock, BenchOptions{})
}

// BenchBlockWith is BenchBlock with the variants and profiling of opts.
func BenchBlockWith(dev device.Device, m *qi21.Model, n, p, reps int, cpuClock func() time.Duration, opts BenchOptions) (*BlockBench, error) {
	if dev == nil || m == nil || len(m.Blocks) != 1 {
		return nil, fmt.Errorf("qi21metal.BenchBlock needs a device and a one-block model")
	}
	if n < 1 || p < 0 || reps < 1 {
		return nil, fmt.Errorf("qi21metal.BenchBlock: %d target rows, %d prefix rows, %d repetitions: need at least 1, 0, 1", n, p, reps)
	}
	c := m.Config
	if err := checkGeometry(c); err != nil {
		return nil, err
	}
	mapping := mapBlock(&m.Blocks[0])
	d := &Denoiser{dev: dev, model: m, cfg: c, knobs: metal.Knobs{Guards: metal.DefaultGuards, Profile: opts.Profile}, policy: metal.Policies}
	d.maxBuffer, d.wset = metal.DeviceLimits(dev)
	aux := &auxBuilder{}
	blocks, err := describeBlocks(m, aux)
	if err != nil {
		return nil, err
	}
	if err := d.place(mapping, blocks, aux); err != nil {
		return nil, err
	}
	defer d.Close()
	if err := d.UseVariants(opts.Gemm, opts.Attn); err != nil {
		return nil, err
	}
	plan := programPlan(c, p, n)
	if err := plan.fit(fmt.Sprintf("a block over %d target and %d prefix rows", n, p), d.resident, d.maxBuffer, d.wset); err != nil {
		return nil, err
	}
	bufs, err := alloc(dev, plan)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, b := range bufs {
			b.Release()
		}
	}()
	D, half := c.Hidden(), c.HeadDim/2
	a := &activations{rows: activationRows(max(p, n)), x: bufs[bufX], xn: bufs[bufXN], panel: bufs[bufPanel],
		attn: bufs[bufAttn], y: bufs[bufY], gu: bufs[bufGateUp], hid: bufs[bufHidden]}
	rng := rand.New(rand.NewPCG(1, 2))
	x := device.View[float32](a.x)
	mods := device.View[float32](bufs[bufStepMods])
	for i := range mods {
		mods[i] = 0.1 * float32(rng.NormFloat64())
	}
	rope := device.View[float32](bufs[bufTargetRope])
	for i := range n * half {
		rope[i] = 1 // cos 1, sin 0: the identity rotation
	}

	rep := &BlockBench{Device: dev.Name(), Codec: m.Blocks[0].ToQ.DType.String(), TargetRows: n, PrefixRows: p}
	rep.GemmFlops, rep.AttnFlops = qi21.BlockFlops(c, n, p)
	rep.Gemm, rep.Attn = d.Variants()
	var wall, devTime, gemmTime, attnTime []time.Duration
	var cpu0 time.Duration
	if cpuClock != nil {
		cpu0 = cpuClock()
	}
	for range reps {
		for i := range n * D {
			x[i] = float32(rng.NormFloat64())
		}
		t0 := time.Now()
		e := d.newEncoder(context.Background(), d.knobs.Guards)
		e.rowOp(a, n, bufs[bufStepMods], -1, 0, pow2(-d.knobs.Guards.Attn))
		e.blocks(&pass{a: a, rows: n, ropeCos: bufs[bufTargetRope], ropeSin: bufs[bufTargetRope], ropeSinOff: 4 * n * half,
			mods: bufs[bufStepMods], pkv: bufs[bufKV], prefix: p})
		if _, err := d.finishPass(e, "bench block"); err != nil {
			return nil, fmt.Errorf("qi21metal.BenchBlock: %w", err)
		}
		wall = append(wall, time.Since(t0))
		last := d.LastPass()
		devTime = append(devTime, last.GPU)
		gemmTime, attnTime = append(gemmTime, last.ByClass[ml.ClassGemm]), append(attnTime, last.ByClass[ml.ClassAttn])
		rep.WallMS = append(rep.WallMS, ms(wall[len(wall)-1]))
	}
	if cpuClock != nil {
		rep.CPUMS = ms(cpuClock()-cpu0) / float64(reps)
	}
	rep.MedianMS, rep.DeviceMS = ms(medianOf(wall)), ms(medianOf(devTime))
	if opts.Profile {
		rep.GemmMS, rep.AttnMS = ms(medianOf(gemmTime)), ms(medianOf(attnTime))
	}
	rep.out = slices.Clone(x[:n*D])
	if rep.MedianMS > 0 {
		rep.GFLOPs = (rep.GemmFlops + rep.AttnFlops) / (rep.MedianMS / 1e3) / 1e9
	}
	return rep, nil
}

// mapBlock copies the block's seven projection payloads into one page-aligned buffer, each at a
// 16-byte boundary, and points the block's weights at the copies: the stand-in for a model
// file's mapping that the weight arena reads in place.
func mapBlock(b *qi21.Block) []byte {
	ws := []**quant.Tensor{&b.ToQ, &b.ToK, &b.ToV, &b.ToOut, &b.Gate, &b.Up, &b.Down}
	total := 0
	for _, w := range ws {
		total += (len((*w).Data) + 15) &^ 15
	}
	raw := make([]byte, total+2*metal.PageSize)
	skip := (metal.PageSize - int(uintptr(unsafe.Pointer(unsafe.SliceData(raw)))%metal.PageSize)) % metal.PageSize
	mapping := raw[skip : skip+total+metal.PageSize]
	off := 0
	for _, w := range ws {
		t := **w
		t.Data = mapping[off : off+len(t.Data)]
		copy(t.Data, (*w).Data)
		*w = &t
		off += (len(t.Data) + 15) &^ 15
	}
	return mapping[:total]
}

func medianOf(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
