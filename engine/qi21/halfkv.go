package qi21

import (
	"runtime"
	"sync"

	"easel/engine/ml"
	"easel/engine/quant"
)

// The prefix cache in half precision. A program keeps every layer's prefix keys and values for
// all its steps (at 1024² with a 1024² condition image, 4136 rows × 32 layers × 2 × 4096 values:
// 4.3 GB in float32), so the model keeps them as IEEE half on the host, as the Metal denoiser
// does on its device, and widens one layer's at a time to float32 for its attention. Keys are
// RMS-normalized and rotated, values are projections of a LayerNorm'd row: both lie far inside
// half's range. Model.FloatKV keeps float32 instead (the reference path of the parity tests).

// halfCache is one program's per-layer prefix K and V, [rows, cols] each, as IEEE half.
type halfCache struct {
	k, v       [][]uint16
	rows, cols int
}

func newHalfCache(layers, rows, cols int) *halfCache {
	return &halfCache{k: make([][]uint16, layers), v: make([][]uint16, layers), rows: rows, cols: cols}
}

// store keeps layer l's keys and values (backend tensors of [rows, cols]) in half.
func (h *halfCache) store(e *ml.Scope, l int, k, v ml.Tensor) {
	kf, vf := e.Download(k), e.Download(v)
	if e.Err() != nil {
		return
	}
	h.k[l], h.v[l] = make([]uint16, len(kf)), make([]uint16, len(vf))
	parallelRange(len(kf), func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			h.k[l][i] = quant.Float32ToHalf(kf[i])
			h.v[l][i] = quant.Float32ToHalf(vf[i])
		}
	})
}

// load widens layer l's keys and values to float32 backend tensors; the caller frees them.
func (h *halfCache) load(e *ml.Scope, l int, buf []float32) (k, v ml.Tensor) {
	widen := func(src []uint16) ml.Tensor {
		parallelRange(len(src), func(i0, i1 int) {
			for i := i0; i < i1; i++ {
				buf[i] = quant.HalfToFloat32(src[i])
			}
		})
		return e.Upload(buf[:len(src)], h.rows, h.cols)
	}
	return widen(h.k[l]), widen(h.v[l])
}

// bytes is the cache's size.
func (h *halfCache) bytes() int64 {
	return int64(len(h.k)) * 2 * int64(h.rows) * int64(h.cols) * 2
}

// parallelRange runs fn over [0, n) in one chunk per core.
func parallelRange(n int, fn func(i0, i1 int)) {
	workers := min(runtime.GOMAXPROCS(0), max(1, n/(1<<16)))
	if workers == 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { fn(n*w/workers, n*(w+1)/workers) })
	}
	wg.Wait()
}
