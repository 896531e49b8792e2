//go:build linux && amd64 && cgo

package emu

import (
	"math"
	"math/rand/v2"
	"testing"

	"easel/kernels/device"
)

// TestEmuTensorOps pins the semantics of the emulated Metal 4 tensor operations
// (include/metal_tensor, include/MetalPerformancePrimitives) that kernels/gemmtensor.metal uses:
// extents listed innermost first (a row-major rows × cols matrix is dextents(cols, rows)),
// explicit and packed strides, transpose_left / transpose_right, multiply versus
// multiply_accumulate, a store that skips elements outside the destination's extents, and float
// accumulation of half inputs in k order (fmaf), which a half accumulator would not reproduce.
func TestEmuTensorOps(t *testing.T) {
	const m, n, k = 8, 16, 32
	d := testDevice(t, Shuffled)
	lib := testLibrary(t, d, "tensorops.metal")
	rng := rand.New(rand.NewPCG(7, 11))
	// Logical L (m × k) and R (k × n), half values large enough that sums need float precision.
	L := make([]float32, m*k)
	R := make([]float32, k*n)
	for i := range L {
		L[i] = float32(halfToFloat64(float64ToHalfBits(rng.NormFloat64() * 8)))
	}
	for i := range R {
		R[i] = float32(halfToFloat64(float64ToHalfBits(rng.NormFloat64() * 8)))
	}
	// want[i][j] accumulates in float32 in k order; the products of halves are exact in float32,
	// so this is what fmaf gives.
	want := make([]float32, m*n)
	halfAcc := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var c float32
			var h float64
			for kk := 0; kk < k; kk++ {
				c += L[i*k+kk] * R[kk*n+j]
				h = halfToFloat64(float64ToHalfBits(h + float64(L[i*k+kk]*R[kk*n+j])))
			}
			want[i*n+j] = c
			halfAcc[i*n+j] = h
		}
	}
	differs := false
	for i := range want {
		differs = differs || float64(want[i]) != halfAcc[i]
	}
	if !differs {
		t.Fatal("the test's inputs cannot tell float from half accumulation: make them larger")
	}
	halves := func(n int, at func(int) float32) device.Buffer {
		b := mustBuffer(t, d, 2*n)
		v := device.View[uint16](b)
		for i := range v {
			v[i] = float64ToHalfBits(float64(at(i)))
		}
		return b
	}
	run := func(fn string, l, r device.Buffer, out int, threads int) []float32 {
		t.Helper()
		p, err := d.Pipeline(lib, fn)
		if err != nil {
			t.Fatal(err)
		}
		o := mustBuffer(t, d, 4*out)
		v := device.View[float32](o)
		for i := range v {
			v[i] = -1e30
		}
		cb, _ := d.NewCommandBuffer()
		enc := cb.ComputeEncoder()
		enc.SetPipeline(p)
		enc.SetBuffer(l, 0, 0)
		enc.SetBuffer(r, 0, 1)
		enc.SetBuffer(o, 0, 2)
		enc.Dispatch(device.Size{Width: 1, Height: 1, Depth: 1}, device.Size{Width: threads, Height: 1, Depth: 1})
		enc.End()
		cb.Commit()
		if err := cb.Wait(); err != nil {
			t.Fatal(err)
		}
		return v
	}
	// mm_nt: L row-major at pitch 40, R stored as Rᵀ [n][k] at pitch 36, D at pitch 20.
	lRow := halves(m*40, func(i int) float32 {
		if i%40 >= k {
			return 1e4 // padding: must not be read
		}
		return L[(i/40)*k+i%40]
	})
	rT := halves(n*36, func(i int) float32 {
		if i%36 >= k {
			return 1e4
		}
		return R[(i%36)*n+i/36]
	})
	for _, fn := range []string{"mm_nt", "mm_clip"} {
		got := run(fn, lRow, rT, m*20, 64)
		for i := 0; i < m; i++ {
			for j := 0; j < 20; j++ {
				inside := j < n && (fn == "mm_nt" || (i < m-2 && j < n-3))
				g := got[i*20+j]
				switch {
				case inside && g != want[i*n+j]:
					t.Fatalf("%s: D[%d][%d] = %v, want %v (float accumulation in k order)", fn, i, j, g, want[i*n+j])
				case !inside && g != -1e30:
					t.Fatalf("%s: D[%d][%d] = %v was written outside the destination's extents", fn, i, j, g)
				}
			}
		}
	}
	// mm_tn_acc: L stored as Lᵀ [k][m] packed, R row-major [k][n] packed, two accumulating runs.
	lT := halves(k*m, func(i int) float32 { return L[(i%m)*k+i/m] })
	rRow := halves(k*n, func(i int) float32 { return R[i] })
	got := run("mm_tn_acc", lT, rRow, m*n, 32)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("mm_tn_acc: D[%d][%d] = %v, want %v", i/n, i%n, got[i], want[i])
		}
	}
}

// float64ToHalfBits rounds to the nearest IEEE half (ties to even) and returns its bits.
func float64ToHalfBits(f float64) uint16 {
	f32 := math.Float32bits(float32(f))
	sign := uint16(f32>>16) & 0x8000
	a := math.Abs(f)
	switch {
	case a >= 65520:
		return sign | 0x7c00
	case a < math.Ldexp(1, -25):
		return sign
	}
	e := math.Floor(math.Log2(a))
	if e < -14 {
		e = -14
	}
	q := math.RoundToEven(a / math.Ldexp(1, int(e)-10))
	if q >= 2048 {
		q /= 2
		e++
	}
	if q < 1024 {
		return sign | uint16(q)
	}
	return sign | uint16(e+15)<<10 | uint16(q-1024)
}

// halfToFloat64 decodes IEEE half bits.
func halfToFloat64(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e := int(h>>10) & 31
	m := float64(h & 1023)
	switch e {
	case 0:
		return sign * math.Ldexp(m, -24)
	case 31:
		if m == 0 {
			return math.Inf(int(sign))
		}
		return math.NaN()
	}
	return sign * math.Ldexp(1024+m, e-25)
}
