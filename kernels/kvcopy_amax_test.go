package kernels_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"easel/kernels"
	"easel/kernels/device"
	"easel/kernels/emu"
)

func TestEmuKVCopy(t *testing.T) {
	const h, rows, row0, n = 256, 12, 3, 7
	const ldp = 3*h + 8
	d := newDevice(t, emu.Reverse)
	p := pipeline(t, d, "kvcopy.metal", "qi_kvcopy")
	panel := newBuffer(t, d, 2*rows*ldp)
	for i := range device.View[uint16](panel) {
		device.View[uint16](panel)[i] = uint16(i * 7919)
	}
	pkv := newBuffer(t, d, 2*(n+1)*2*h)
	prm := kernels.KvParams{H: h, Row0: row0, N: n, Ldp: ldp}
	groups, threads := kernels.KvCopyGrid(h, n)
	run(t, d, p, groups, threads,
		binding{index: 0, buf: panel}, binding{index: 1, buf: pkv}, binding{index: 2, bytes: device.StructBytes(&prm)})
	src, dst := device.View[uint16](panel), device.View[uint16](pkv)
	for r := 0; r <= n; r++ {
		for c := 0; c < 2*h; c++ {
			want := uint16(0) // the row past n stays untouched
			if r < n {
				want = src[(row0+r)*ldp+h+c]
			}
			if got := dst[r*2*h+c]; got != want {
				t.Fatalf("pkv[%d][%d] = %#04x, want %#04x", r, c, got, want)
			}
		}
	}
}

func TestEmuAmax(t *testing.T) {
	const n, slot = 100003, 2
	d := newDevice(t, emu.Forward)
	p := pipeline(t, d, "amax.metal", "qi_amax")
	rng := rand.New(rand.NewPCG(8, 9))
	data := newBuffer(t, d, 2*n)
	want := 0.0
	for i := range device.View[uint16](data) {
		h := float64ToHalf(rng.NormFloat64() * 100)
		device.View[uint16](data)[i] = h
		want = max(want, math.Abs(halfToFloat64(h)))
	}
	amax := newBuffer(t, d, 4*4)
	device.View[float32](amax)[slot] = 1 // an earlier, smaller fold
	count, s := uint32(n), uint32(slot)
	groups, threads := kernels.AmaxGrid()
	run(t, d, p, groups, threads,
		binding{index: 0, buf: data}, binding{index: 1, buf: amax},
		binding{index: 2, bytes: device.StructBytes(&count)}, binding{index: 3, bytes: device.StructBytes(&s)})
	got := device.View[float32](amax)
	if float64(got[slot]) != want {
		t.Errorf("amax[%d] = %v, want %v", slot, got[slot], want)
	}
	for i, v := range got {
		if i != slot && v != 0 {
			t.Errorf("amax[%d] = %v, only slot %d may change", i, v, slot)
		}
	}
}
