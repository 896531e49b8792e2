package cpu

import (
	"fmt"
	"runtime"
	"sync"

	"easel/engine/ml"
	"easel/engine/mmapfile"
	"easel/engine/quant"
)

// Linear is dst = x · wᵀ.
func (b *Backend) Linear(dst, x ml.Tensor, w *quant.Tensor) error {
	return b.LinearBatch([]ml.Tensor{dst}, x, []*quant.Tensor{w})
}

// LinearBatch is dst[i] = x · w[i]ᵀ. Each weight is dequantized tileRows rows at a time into a
// bounded scratch (spread over the cores), and each tile is one sgemm into its columns of dst.
func (b *Backend) LinearBatch(dsts []ml.Tensor, x ml.Tensor, ws []*quant.Tensor) error {
	const op = "LinearBatch"
	if len(dsts) != len(ws) || len(ws) == 0 {
		return fmt.Errorf("cpu.%s: %d destinations for %d weights", op, len(dsts), len(ws))
	}
	cx, err := host(op, "input", x)
	if err != nil {
		return err
	}
	n, in := cx.rows(), cx.cols()
	outs := make([]*Tensor, len(ws))
	maxIn := 0
	flops := 0.0
	for i, w := range ws {
		if err := checkWeight(op, w); err != nil {
			return err
		}
		if w.Cols() != in {
			return fmt.Errorf("cpu.%s: weight %q is %v (input width %d) but the input is %v (width %d)", op, w.Name, w.Shape, w.Cols(), cx.shape, in)
		}
		if outs[i], err = host(op, fmt.Sprintf("destination %d", i), dsts[i]); err != nil {
			return err
		}
		if outs[i].cols() != w.Rows() || outs[i].rows() != n {
			return fmt.Errorf("cpu.%s: destination %d has shape %v; weight %q %v over %d input rows needs [%d, %d]", op, i, outs[i].shape, w.Name, w.Shape, n, n, w.Rows())
		}
		maxIn = max(maxIn, in)
		flops += 2 * float64(n) * float64(w.Rows()) * float64(in)
	}
	if n == 0 {
		return nil
	}
	defer b.track(ml.ClassGemm, flops)()
	if rowLinear(n, ws) {
		b.linearRow(outs, cx, ws) // one token through 8-bit weights (gemv.go)
		return nil
	}
	if !blasParallel {
		return b.linearTiles(outs, cx, ws, maxIn)
	}
	if n < pipelineMinRows {
		return b.linearParallelDequantize(outs, cx, ws, maxIn)
	}
	return b.linearPipelined(outs, cx, ws, maxIn)
}

// pipelineMinRows is the input height from which a tile's sgemm takes long enough to hide the
// next tile's dequantization on one goroutine; below it (the modulation's single row) the
// dequantization dominates and runs on every core instead.
const pipelineMinRows = 64

// linearParallelDequantize dequantizes each tile on all cores, then multiplies it.
func (b *Backend) linearParallelDequantize(outs []*Tensor, x *Tensor, ws []*quant.Tensor, maxIn int) error {
	n, in := x.rows(), x.cols()
	scratch := getScratch(b.tileRows * maxIn)
	defer putScratch(scratch)
	for i, w := range ws {
		rows := w.Rows()
		for r0 := 0; r0 < rows; r0 += b.tileRows {
			r1 := min(r0+b.tileRows, rows)
			if err := parallelDequantize(w, r0, r1, scratch); err != nil {
				return fmt.Errorf("cpu.LinearBatch: %v", err)
			}
			sgemm(true, n, r1-r0, in, 1, x.data, in, scratch, in, 0, outs[i].data[r0:], rows)
		}
	}
	return nil
}

// linearTiles gives every core its own tiles: each goroutine dequantizes a tile into its own
// scratch and multiplies it with a single-threaded sgemm. When there are fewer tiles than cores
// (a LoRA's down factor has only its rank's rows) and many input rows, each tile's input rows are
// split between cores too, each dequantizing the (small) tile for itself.
func (b *Backend) linearTiles(outs []*Tensor, x *Tensor, ws []*quant.Tensor, maxIn int) error {
	n, in := x.rows(), x.cols()
	type tile struct{ w, r0, r1, n0, n1 int }
	var tiles []tile
	for i, w := range ws {
		for r0 := 0; r0 < w.Rows(); r0 += b.tileRows {
			tiles = append(tiles, tile{i, r0, min(r0+b.tileRows, w.Rows()), 0, n})
		}
	}
	if cores := runtime.GOMAXPROCS(0); len(tiles) < cores && n >= 2*splitMinRows {
		parts := min((cores+len(tiles)-1)/len(tiles), n/splitMinRows)
		var split []tile
		for _, t := range tiles {
			for p := 0; p < parts; p++ {
				t.n0, t.n1 = n*p/parts, n*(p+1)/parts
				split = append(split, t)
			}
		}
		tiles = split
	}
	workers := tileWorkers(len(tiles))
	scratch := make([][]float32, workers)
	errs := make([]error, workers)
	for w := range scratch {
		scratch[w] = getScratch(b.tileRows * maxIn)
	}
	forTiles(len(tiles), func(w, i int) {
		t := tiles[i]
		if errs[w] != nil {
			return
		}
		if err := quant.DequantizeRows(ws[t.w], t.r0, t.r1, scratch[w]); err != nil {
			errs[w] = fmt.Errorf("cpu.LinearBatch: %v", err)
			return
		}
		rows := ws[t.w].Rows()
		sgemm(true, t.n1-t.n0, t.r1-t.r0, in, 1, x.data[t.n0*in:], in, scratch[w], in, 0, outs[t.w].data[t.n0*rows+t.r0:], rows)
	})
	for w := range scratch {
		putScratch(scratch[w])
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// splitMinRows is the fewest input rows a split tile multiplies.
const splitMinRows = 64

// weightTile is one dequantized tile in flight between the decoding goroutine and the GEMM.
type weightTile struct {
	w, r0, r1 int
	buf       []float32
	err       error
}

// linearPipelined decodes tile t+1 on one goroutine while the GEMM (on every core) multiplies
// tile t: two tile buffers circulate between them.
func (b *Backend) linearPipelined(outs []*Tensor, x *Tensor, ws []*quant.Tensor, maxIn int) error {
	n, in := x.rows(), x.cols()
	free := make(chan []float32, 2)
	for range 2 {
		free <- getScratch(b.tileRows * maxIn)
	}
	ready := make(chan weightTile, 2)
	stop := make(chan struct{})
	var decoder mmapfile.Group // a fault in the decoder comes back to this goroutine at Wait
	decoder.Go(func() {
		defer close(ready)
		for i, w := range ws {
			for r0 := 0; r0 < w.Rows(); r0 += b.tileRows {
				var buf []float32
				select {
				case buf = <-free:
				case <-stop:
					return
				}
				r1 := min(r0+b.tileRows, w.Rows())
				err := quant.DequantizeRows(w, r0, r1, buf)
				ready <- weightTile{w: i, r0: r0, r1: r1, buf: buf, err: err}
				if err != nil {
					return
				}
			}
		}
	})
	var failed error
	for t := range ready {
		if failed == nil && t.err != nil {
			failed = fmt.Errorf("cpu.LinearBatch: %v", t.err)
			close(stop)
		}
		if failed == nil {
			rows := ws[t.w].Rows()
			sgemm(true, n, t.r1-t.r0, in, 1, x.data, in, t.buf, in, 0, outs[t.w].data[t.r0:], rows)
		}
		free <- t.buf
	}
	decoder.Wait() // before counting the buffers: a decoder that faulted still holds one
	for range 2 {
		putScratch(<-free)
	}
	return failed
}

// parallelDequantize splits a tile's rows over the cores.
func parallelDequantize(w *quant.Tensor, r0, r1 int, dst []float32) error {
	cols := w.Cols()
	errs := make(chan error, 64)
	parallelRows(r1-r0, 16, func(lo, hi int) {
		if err := quant.DequantizeRows(w, r0+lo, r0+hi, dst[lo*cols:hi*cols]); err != nil {
			errs <- err
		}
	})
	close(errs)
	return <-errs
}

// tilePool recycles weight-tile scratch between calls (a tile is up to 12.6 MB at the DiT's widest).
var tilePool sync.Pool

func getScratch(n int) []float32 {
	if p, ok := tilePool.Get().(*[]float32); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]float32, n)
}

func putScratch(s []float32) { tilePool.Put(&s) }
