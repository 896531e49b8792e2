package kernels_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"easel/engine/quant"
	"easel/kernels"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// gemmProblem is one GEMM's inputs on a device, bound as gemm.metal's buffers: x and the z weight
// slices (with their q8 side planes), the parameters, and the output length.
type gemmProblem struct {
	c      gemmCase
	binds  []binding
	yBytes int
}

// newGEMMProblem builds c's inputs the way testGEMM does: x and y hold the z slices side by side
// with padded rows, the weights are random and encoded with c.codec.
func newGEMMProblem(t *testing.T, d device.Device, c gemmCase) gemmProblem {
	rng := rand.New(rand.NewPCG(uint64(c.n), uint64(c.k*c.rows+c.z)))
	ldx := c.z*c.k + 8
	xBuf := newBuffer(t, d, 2*c.n*ldx)
	xh := device.View[uint16](xBuf)
	for i := range xh {
		xh[i] = float64ToHalf(rng.NormFloat64())
	}
	ldy := c.z*c.rows + 16
	elem := 4
	if c.halfOut {
		elem = 2
	}
	prm := kernels.MmParams{N: uint32(c.n), Rows: uint32(c.rows), K: uint32(c.k), Ldx: uint32(ldx), Ldy: uint32(ldy), Mul: c.mul}
	if c.halfOut {
		prm.Epi = 1
	}
	binds := []binding{{index: 6, buf: xBuf}}
	for s := 0; s < c.z; s++ {
		payload, err := quant.Encode(c.codec, []int{c.rows, c.k}, randomWeights(rng, c.rows, c.k))
		if err != nil {
			t.Fatal(err)
		}
		wBuf := newBuffer(t, d, len(payload))
		copy(wBuf.Bytes(), payload)
		binds = append(binds, binding{index: s, buf: wBuf})
		if c.codec == quant.Q4TP {
			gpr := c.k / 32
			prm.ParamsOff = uint32(c.rows * gpr * 16)
			prm.CodesOff = prm.ParamsOff + uint32(4*c.rows)
			prm.CodeStride = uint32((gpr*5 + 7) / 8)
		} else {
			dw := decodeQ8(payload, c.rows, c.k, c.codec == quant.Q8_2F)
			rsBuf := newBuffer(t, d, 4*c.rows)
			copy(device.View[float32](rsBuf), dw.rs)
			colBuf := newBuffer(t, d, 4*c.k)
			copy(device.View[float32](colBuf), dw.col)
			binds = append(binds, binding{index: 3 + s, buf: rsBuf}, binding{index: 9 + s, buf: colBuf})
		}
		prm.XOff[s] = uint32(s * c.k)
		prm.YOff[s] = uint32(s * c.rows)
	}
	binds = append(binds, binding{index: 8, bytes: device.StructBytes(&prm)})
	return gemmProblem{c: c, binds: binds, yBytes: elem * c.n * ldy}
}

// shape is the problem as GemmVariant.Fits sees it.
func (g gemmProblem) shape() kernels.GemmShape {
	c := g.c
	s := kernels.GemmShape{N: c.n, Rows: c.rows, K: c.k, Ldx: c.z*c.k + 8, Ldy: c.z*c.rows + 16}
	for i := 0; i < c.z; i++ {
		s.XOff = append(s.XOff, i*c.k)
		s.YOff = append(s.YOff, i*c.rows)
	}
	return s
}

// run dispatches variant v on the problem into a fresh y poisoned with 0xFF, and returns y.
func (g gemmProblem) run(t *testing.T, d device.Device, v kernels.GemmVariant) []byte {
	t.Helper()
	if err := v.Fits(g.shape()); err != nil {
		t.Fatalf("the test's shape should fit every variant: %v", err)
	}
	p := pipeline(t, d, v.File, v.Function(g.c.codec != quant.Q4TP, g.c.halfOut))
	if err := kernels.FitsPipeline(v.Name, v.Threads, v.ThreadgroupBytes, p.MaxTotalThreadsPerThreadgroup()); err != nil {
		t.Fatal(err)
	}
	yBuf := newBuffer(t, d, g.yBytes)
	for i := range yBuf.Bytes() {
		yBuf.Bytes()[i] = 0xff
	}
	groups, threads := v.Grid(g.c.n, g.c.rows, g.c.z)
	run(t, d, p, groups, threads, append([]binding{{index: 7, buf: yBuf}}, g.binds...)...)
	return bytes.Clone(yBuf.Bytes())
}

// TestEmuGemmVariantsMatchBaseline runs every GEMM variant on the baseline's test geometries
// (and ones that reach the swizzle's partial band and the wide tile's edges) and requires the
// baseline's output bit for bit, padding included: the variants stage the same half values and
// accumulate in the same order, so nothing may differ.
func TestEmuGemmVariantsMatchBaseline(t *testing.T) {
	cases := []gemmCase{
		{codec: quant.Q4TP, n: 70, rows: 128, k: 256, z: 1, mul: 0.5},
		{codec: quant.Q4TP, n: 64, rows: 64, k: 96, z: 3, halfOut: true, mul: 1.0 / 16},
		{codec: quant.Q4TP, n: 9, rows: 64, k: 64, z: 2, mul: 4, order: emu.Shuffled},
		{codec: quant.Q4TP, n: 200, rows: 640, k: 64, z: 1, halfOut: true, mul: 1},
		{codec: quant.Q8_2F, n: 33, rows: 128, k: 128, z: 2, mul: 1},
		{codec: quant.Q8_2F, n: 64, rows: 64, k: 64, z: 1, halfOut: true, mul: 0.25, order: emu.Reverse},
		{codec: quant.Q8Row, n: 100, rows: 64, k: 160, z: 3, mul: 2},
		{codec: quant.Q8_2F, n: 130, rows: 576, k: 32, z: 1, mul: 1, order: emu.Shuffled},
	}
	base := kernels.GemmVariants[0]
	for _, c := range cases {
		t.Run(c.String(), func(t *testing.T) {
			d := newDevice(t, c.order)
			g := newGEMMProblem(t, d, c)
			want := g.run(t, d, base)
			for _, v := range kernels.GemmVariants[1:] {
				got := g.run(t, d, v)
				if i := firstDiff(got, want); i >= 0 {
					t.Errorf("variant %s differs from the baseline first at byte %d of y (%#x, baseline %#x)", v.Name, i, got[i], want[i])
				}
			}
		})
	}
}

// firstDiff is the first index where a and b differ, or -1.
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// TestGemmVariantTable checks the variant table's own consistency: unique names, the baseline
// first, every function of a variant listed in kernels.Libraries under its file, threadgroup
// memory within Metal's 32 KiB and threads within 1024.
func TestGemmVariantTable(t *testing.T) {
	if kernels.GemmVariants[0].Name != "base" || kernels.FlashVariants[0].Name != "base" {
		t.Fatal("the baseline must be the first variant")
	}
	defined := map[string]string{}
	for _, l := range kernels.Libraries {
		for _, k := range l.Kernels {
			defined[k] = l.File
		}
	}
	seen := map[string]bool{}
	for _, v := range kernels.GemmVariants {
		if seen[v.Name] {
			t.Errorf("two GEMM variants are called %s", v.Name)
		}
		seen[v.Name] = true
		for _, f := range v.Functions() {
			if defined[f] != v.File {
				t.Errorf("GEMM variant %s: %s is not a kernel of %s", v.Name, f, v.File)
			}
		}
		if err := kernels.FitsPipeline(v.Name, v.Threads, v.ThreadgroupBytes, device.MaxThreadsPerThreadgroup); err != nil {
			t.Error(err)
		}
		if v.Threads != 2*v.TileM {
			t.Errorf("GEMM variant %s: %d threads for a %d-token tile; the staging needs 2 per token row", v.Name, v.Threads, v.TileM)
		}
	}
	seen = map[string]bool{}
	for _, v := range kernels.FlashVariants {
		if seen[v.Name] {
			t.Errorf("two flash variants are called %s", v.Name)
		}
		seen[v.Name] = true
		if defined[v.Function] != v.File {
			t.Errorf("flash variant %s: %s is not a kernel of %s", v.Name, v.Function, v.File)
		}
		if err := kernels.FitsPipeline(v.Name, v.Threads, v.ThreadgroupBytes, device.MaxThreadsPerThreadgroup); err != nil {
			t.Error(err)
		}
	}
}

func TestGemmVariantFits(t *testing.T) {
	st, _ := kernels.GemmVariantNamed("staged")
	sp, _ := kernels.GemmVariantNamed("spec")
	ok := kernels.GemmShape{N: 10, Rows: 128, K: 64, Ldx: 64, Ldy: 128, XOff: []int{0}, YOff: []int{0}}
	for _, c := range []struct {
		v     kernels.GemmVariant
		shape func(kernels.GemmShape) kernels.GemmShape
		fits  bool
	}{
		{st, func(s kernels.GemmShape) kernels.GemmShape { return s }, true},
		{st, func(s kernels.GemmShape) kernels.GemmShape { s.Ldx = 68; return s }, false},
		{st, func(s kernels.GemmShape) kernels.GemmShape { s.XOff = []int{0, 4}; return s }, false},
		{st, func(s kernels.GemmShape) kernels.GemmShape { s.Rows = 96; return s }, false},
		{st, func(s kernels.GemmShape) kernels.GemmShape { s.K = 48; return s }, false},
		{st, func(s kernels.GemmShape) kernels.GemmShape { s.Ldy = 129; return s }, true},
		{sp, func(s kernels.GemmShape) kernels.GemmShape { s.Ldy = 129; return s }, false},
		{sp, func(s kernels.GemmShape) kernels.GemmShape { s.YOff = []int{3}; return s }, false},
	} {
		s := c.shape(ok)
		if err := c.v.Fits(s); (err == nil) != c.fits {
			t.Errorf("%s.Fits(%+v) = %v, want fits %v", c.v.Name, s, err, c.fits)
		}
	}
	wide, _ := kernels.GemmVariantNamed("wide")
	if wide.Meant(512) || !wide.Meant(4096) {
		t.Error("the wide tile is meant for n ≥ 1024 only")
	}
	if err := kernels.FitsPipeline("wide", 256, 15360, 192); err == nil {
		t.Error("a 256-thread variant fits a pipeline that allows 192 threads")
	}
	if err := kernels.FitsPipeline("big", 128, 33000, 1024); err == nil {
		t.Error("33000 bytes of threadgroup memory fit")
	}
	_ = fmt.Sprint()
}
