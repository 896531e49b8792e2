package vae

import "easel/engine/ml"

// ChannelNormer is an optional fast path a backend may implement: the channel-wise RMS norm of a
// channel-first activation without transposing it. Backends without it get the same result from
// Transpose + RMSNorm + Transpose.
type ChannelNormer interface {
	// ChannelRMSNorm is dst[c, y, x] = x[c, y, x] / sqrt(mean over c of x[·, y, x]² + eps) · gamma[c]
	// for x and dst [C, H, W] and gamma one row of C values. dst may be x.
	ChannelRMSNorm(dst, x, gamma ml.Tensor, eps float32) error
}

// normEps makes RMSNorm reproduce F.normalize(x, dim=channels)·√C: x·√C / max(‖x‖₂, 1e-12) equals
// x / sqrt(‖x‖₂²/C + eps) with eps = 1e-24/C wherever ‖x‖₂ ≥ 1e-12, and both give 0 for x = 0.
func normEps(channels int) float32 { return float32(1e-24 / float64(channels)) }

// channelNorm is the VAE's RMS_norm: every pixel's channel vector scaled to RMS 1, times gamma.
func (o ops) channelNorm(x, gamma ml.Tensor) (ml.Tensor, error) {
	c, h, w := chw(x)
	dst, err := o.b.New(c, h, w)
	if err != nil {
		return nil, err
	}
	if cn, ok := o.b.(ChannelNormer); ok {
		if err := cn.ChannelRMSNorm(dst, x, gamma, normEps(c)); err != nil {
			o.b.Free(dst)
			return nil, err
		}
		return dst, nil
	}
	if err := o.channelNormByRows(dst, x, gamma); err != nil {
		o.b.Free(dst)
		return nil, err
	}
	return dst, nil
}

// channelNormByRows is the composed path: [C, H·W] → pixel rows [H·W, C] → RMSNorm → back.
func (o ops) channelNormByRows(dst, x, gamma ml.Tensor) error {
	c, h, w := chw(x)
	rows, err := o.b.New(h*w, c)
	if err != nil {
		return err
	}
	defer o.b.Free(rows)
	xf, err := o.flat(x)
	if err != nil {
		return err
	}
	df, err := o.flat(dst)
	if err != nil {
		return err
	}
	if err := o.b.Transpose(rows, xf); err != nil {
		return err
	}
	if err := o.b.RMSNorm(rows, rows, gamma, normEps(c), false); err != nil {
		return err
	}
	return o.b.Transpose(df, rows)
}
