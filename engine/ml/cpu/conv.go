package cpu

import (
	"fmt"

	"easel/engine/ml"
	"easel/engine/quant"
)

// convColumnBudget bounds the im2col scratch (floats) of one chunk of output rows.
const convColumnBudget = 8 << 20

// Conv2D convolves x [inC, H, W] with w [outC, inC, kh, kw] into dst [outC, H', W'] by im2col
// over chunks of output rows and one sgemm per weight tile and chunk.
func (b *Backend) Conv2D(dst, x ml.Tensor, w *quant.Tensor, bias ml.Tensor, spec ml.ConvSpec) error {
	const op = "Conv2D"
	cx, err := host(op, "input", x)
	if err != nil {
		return err
	}
	cd, err := host(op, "destination", dst)
	if err != nil {
		return err
	}
	if err := checkWeight(op, w); err != nil {
		return err
	}
	if len(w.Shape) != 4 || len(cx.shape) != 3 || len(cd.shape) != 3 {
		return fmt.Errorf("cpu.%s: want input [C, H, W], weight [O, C, kh, kw], destination [O, H', W']; got %v, %v (%q), %v", op, cx.shape, w.Shape, w.Name, cd.shape)
	}
	inC, H, W := cx.shape[0], cx.shape[1], cx.shape[2]
	outC, kh, kw := w.Shape[0], w.Shape[2], w.Shape[3]
	s := spec.Stride
	if s <= 0 || spec.PadTop < 0 || spec.PadBottom < 0 || spec.PadLeft < 0 || spec.PadRight < 0 {
		return fmt.Errorf("cpu.%s: stride %d and padding must be positive / non-negative (%+v)", op, s, spec)
	}
	if w.Shape[1] != inC {
		return fmt.Errorf("cpu.%s: weight %q %v expects %d input channels, the input %v has %d", op, w.Name, w.Shape, w.Shape[1], cx.shape, inC)
	}
	oh := (H+spec.PadTop+spec.PadBottom-kh)/s + 1
	ow := (W+spec.PadLeft+spec.PadRight-kw)/s + 1
	if oh <= 0 || ow <= 0 || cd.shape[0] != outC || cd.shape[1] != oh || cd.shape[2] != ow {
		return fmt.Errorf("cpu.%s: input %v with kernel %dx%d, stride %d, padding %+v gives [%d, %d, %d], but the destination is %v", op, cx.shape, kh, kw, s, spec, outC, oh, ow, cd.shape)
	}
	cb, err := optional(op, "bias", bias)
	if err != nil {
		return err
	}
	if cb != nil {
		if err := oneRow(op, "bias", cb, outC); err != nil {
			return err
		}
	}
	K := inC * kh * kw
	P := oh * ow
	defer b.track(ml.ClassConv, 2*float64(outC)*float64(K)*float64(P))()
	chunkRows := max(1, min(oh, convColumnBudget/max(1, K*ow)))
	cols := make([]float32, K*chunkRows*ow)
	tile := min(outC, b.tileRows)
	tiles := (outC + tile - 1) / tile
	workers := tileWorkers(tiles)
	wt := make([][]float32, workers)
	errs := make([]error, workers)
	for i := range wt {
		wt[i] = make([]float32, tile*K)
	}
	for y0 := 0; y0 < oh; y0 += chunkRows {
		ny := min(chunkRows, oh-y0)
		np := ny * ow
		im2col(cx.data, inC, H, W, kh, kw, spec, y0, ny, ow, cols[:K*np])
		forTiles(tiles, func(wk, i int) {
			o0 := i * tile
			o1 := min(o0+tile, outC)
			var err error
			if workers == 1 {
				err = parallelDequantize(w, o0, o1, wt[wk])
			} else {
				err = quant.DequantizeRows(w, o0, o1, wt[wk])
			}
			if err != nil {
				errs[wk] = err
				return
			}
			sgemm(false, o1-o0, np, K, 1, wt[wk], K, cols, np, 0, cd.data[o0*P+y0*ow:], P)
		})
		for _, err := range errs {
			if err != nil {
				return fmt.Errorf("cpu.%s: %v", op, err)
			}
		}
	}
	if cb != nil {
		parallelRows(outC, 1, func(lo, hi int) {
			for o := lo; o < hi; o++ {
				plane := cd.data[o*P : (o+1)*P]
				for i := range plane {
					plane[i] += cb.data[o]
				}
			}
		})
	}
	return nil
}

// im2col writes the [inC·kh·kw, ny·ow] patch matrix of output rows [y0, y0+ny).
func im2col(x []float32, inC, H, W, kh, kw int, spec ml.ConvSpec, y0, ny, ow int, cols []float32) {
	np := ny * ow
	s := spec.Stride
	parallelRows(inC*kh*kw, 1, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			c, ky, kx := r/(kh*kw), (r/kw)%kh, r%kw
			dst := cols[r*np : (r+1)*np]
			plane := x[c*H*W : (c+1)*H*W]
			for yy := 0; yy < ny; yy++ {
				iy := (y0+yy)*s + ky - spec.PadTop
				row := dst[yy*ow : (yy+1)*ow]
				if iy < 0 || iy >= H {
					clear(row)
					continue
				}
				src := plane[iy*W : (iy+1)*W]
				for ox := range row {
					ix := ox*s + kx - spec.PadLeft
					if ix < 0 || ix >= W {
						row[ox] = 0
					} else {
						row[ox] = src[ix]
					}
				}
			}
		}
	})
}

// UpsampleNearest repeats every pixel factor×factor times.
func (b *Backend) UpsampleNearest(dst, x ml.Tensor, factor int) error {
	const op = "UpsampleNearest"
	cx, err := host(op, "input", x)
	if err != nil {
		return err
	}
	cd, err := host(op, "destination", dst)
	if err != nil {
		return err
	}
	if factor < 1 || len(cx.shape) != 3 || len(cd.shape) != 3 || cd.shape[0] != cx.shape[0] || cd.shape[1] != factor*cx.shape[1] || cd.shape[2] != factor*cx.shape[2] {
		return fmt.Errorf("cpu.%s: input %v upsampled ×%d does not give the destination %v", op, cx.shape, factor, cd.shape)
	}
	C, H, W := cx.shape[0], cx.shape[1], cx.shape[2]
	defer b.track(ml.ClassConv, 0)()
	parallelRows(C*H, 8, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			c, y := r/H, r%H
			src := cx.data[(c*H+y)*W : (c*H+y+1)*W]
			for fy := 0; fy < factor; fy++ {
				out := cd.data[(c*H*factor+y*factor+fy)*W*factor:][:W*factor]
				for xx, v := range src {
					for fx := 0; fx < factor; fx++ {
						out[xx*factor+fx] = v
					}
				}
			}
		}
	})
	return nil
}
