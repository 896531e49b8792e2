package kernels_test

import (
	"math/rand/v2"
	"testing"

	"easel/engine/quant"
	"easel/kernels"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// Emulator timings of the kernels at small shapes, for planning CI time (docs/BENCHMARKS.md,
// "Metal kernels under the emulator"). These are CPU-emulation figures, not GPU figures.

// benchDispatch times one encoded dispatch per iteration (encode + run + wait).
func benchDispatch(b *testing.B, d device.Device, p device.Pipeline, groups, threads device.Size, binds ...binding) {
	b.ResetTimer()
	for b.Loop() {
		run(b, d, p, groups, threads, binds...)
	}
}

func BenchmarkEmuGEMMQ4TP(b *testing.B) {
	const n, rows, k = 128, 256, 512 // 2·n·rows·k = 33.6 MFLOP
	d := newDevice(b, emu.Forward)
	p := pipeline(b, d, "gemm.metal", "qi_mm_q4tp")
	rng := rand.New(rand.NewPCG(1, 2))
	payload, err := quant.Encode(quant.Q4TP, []int{rows, k}, randomWeights(rng, rows, k))
	if err != nil {
		b.Fatal(err)
	}
	w := newBuffer(b, d, len(payload))
	copy(w.Bytes(), payload)
	x := newBuffer(b, d, 2*n*k)
	for i := range device.View[uint16](x) {
		device.View[uint16](x)[i] = float64ToHalf(rng.NormFloat64())
	}
	y := newBuffer(b, d, 4*n*rows)
	gpr := k / 32
	prm := kernels.MmParams{N: n, Rows: rows, K: k, Ldx: k, Ldy: rows, Mul: 1,
		ParamsOff: uint32(rows * gpr * 16), CodesOff: uint32(rows*gpr*16 + 4*rows), CodeStride: uint32((gpr*5 + 7) / 8)}
	groups, threads := kernels.MmGrid(n, rows, 1)
	benchDispatch(b, d, p, groups, threads,
		binding{index: 0, buf: w}, binding{index: 6, buf: x}, binding{index: 7, buf: y}, binding{index: 8, bytes: device.StructBytes(&prm)})
	b.ReportMetric(2*n*rows*k/(b.Elapsed().Seconds()/float64(b.N))/1e6, "MFLOP/s")
}

func BenchmarkEmuFlashStep(b *testing.B) {
	const heads, nPre, nOwn = 1, 192, 64 // 64 queries × 256 keys × 128 channels: 8.4 MFLOP
	d := newDevice(b, emu.Forward)
	p := pipeline(b, d, "flash.metal", "qi_flash")
	h := heads * 128
	rng := rand.New(rand.NewPCG(3, 4))
	randomHalves := func(n int) device.Buffer {
		buf := newBuffer(b, d, 2*n)
		for i := range device.View[uint16](buf) {
			device.View[uint16](buf)[i] = float64ToHalf(rng.NormFloat64() * 0.3)
		}
		return buf
	}
	panel, pkv := randomHalves(nOwn*3*h), randomHalves(nPre*2*h)
	out, vis := newBuffer(b, d, 2*nOwn*h), newBuffer(b, d, 4)
	prm := kernels.FlashParams{NQ: nOwn, NPre: nPre, NOwn: nOwn, Ldp: uint32(3 * h), H: uint32(h), Ldo: uint32(h), OScale: 1}
	groups, threads := kernels.FlashGrid(nOwn, heads)
	benchDispatch(b, d, p, groups, threads,
		binding{index: 0, buf: panel}, binding{index: 1, buf: out}, binding{index: 2, buf: pkv},
		binding{index: 3, buf: vis}, binding{index: 4, bytes: device.StructBytes(&prm)})
	b.ReportMetric(4*64*256*128/(b.Elapsed().Seconds()/float64(b.N))/1e6, "MFLOP/s")
}

func BenchmarkEmuRowOp(b *testing.B) {
	const h, rows = 4096, 16
	d := newDevice(b, emu.Forward)
	p := pipeline(b, d, "rowop.metal", "qi_rowop")
	x, y, xn := newBuffer(b, d, 4*rows*h), newBuffer(b, d, 4*rows*h), newBuffer(b, d, 2*rows*h)
	gate, scale := newBuffer(b, d, 4*h), newBuffer(b, d, 4*h)
	for i := range device.View[float32](x) {
		device.View[float32](x)[i] = float32(i%17) * 0.1
	}
	prm := kernels.RowParams{H: h, Mode: 3, Eps: 1e-6, OScale: 1}
	groups, threads := kernels.RowOpGrid(rows)
	benchDispatch(b, d, p, groups, threads,
		binding{index: 0, buf: x}, binding{index: 1, buf: y}, binding{index: 2, buf: xn},
		binding{index: 3, buf: gate}, binding{index: 4, buf: scale}, binding{index: 5, bytes: device.StructBytes(&prm)})
}
