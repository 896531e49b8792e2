package cpu

import (
	"fmt"
	"math"

	"easel/engine/ml"
)

// channelNormBlock is how many pixels ChannelRMSNorm handles at a time: their float64 sums of
// squares stay in L1 while the channels stream past.
const channelNormBlock = 512

// ChannelRMSNorm is the VAE's channel-wise RMS norm of a channel-first map: for x and dst
// [C, H, W] and gamma one row of C, dst[c, p] = x[c, p] / sqrt(mean over c of x[·, p]² + eps) ·
// gamma[c]. It gives the same bits as a transpose to pixel rows, RMSNorm and a transpose back
// (the sums are float64, the scale is applied as x·inv·gamma in both). dst may be x. Class ClassNorm.
func (b *Backend) ChannelRMSNorm(dst, x, gamma ml.Tensor, eps float32) error {
	const op = "ChannelRMSNorm"
	cx, err := host(op, "input", x)
	if err != nil {
		return err
	}
	cd, err := host(op, "destination", dst)
	if err != nil {
		return err
	}
	cg, err := host(op, "gamma", gamma)
	if err != nil {
		return err
	}
	if len(cx.shape) != 3 {
		return fmt.Errorf("cpu.%s: input %v must be [C, H, W]", op, cx.shape)
	}
	if err := sameSize(op, cd, cx, "destination", "input"); err != nil {
		return err
	}
	C, P := cx.shape[0], cx.shape[1]*cx.shape[2]
	if err := oneRow(op, "gamma", cg, C); err != nil {
		return err
	}
	defer b.track(ml.ClassNorm, 0)()
	parallelRows(P, channelNormBlock, func(lo, hi int) {
		var sums [channelNormBlock]float64
		var inv [channelNormBlock]float32
		for p0 := lo; p0 < hi; p0 += channelNormBlock {
			n := min(channelNormBlock, hi-p0)
			clear(sums[:n])
			for c := 0; c < C; c++ {
				row := cx.data[c*P+p0 : c*P+p0+n]
				for i, v := range row {
					sums[i] += float64(v) * float64(v)
				}
			}
			for i := range n {
				inv[i] = float32(1 / math.Sqrt(sums[i]/float64(C)+float64(eps)))
			}
			for c := 0; c < C; c++ {
				g := cg.data[c]
				src := cx.data[c*P+p0 : c*P+p0+n]
				out := cd.data[c*P+p0 : c*P+p0+n]
				for i, v := range src {
					out[i] = v * inv[i] * g
				}
			}
		}
	})
	return nil
}
