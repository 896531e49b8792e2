package vae

import "easel/engine/ml"

// normEps makes RMSNorm reproduce F.normalize(x, dim=channels)·√C: x·√C / max(‖x‖₂, 1e-12) equals
// x / sqrt(‖x‖₂²/C + eps) with eps = 1e-24/C wherever ‖x‖₂ ≥ 1e-12, and both give 0 for x = 0.
func normEps(channels int) float32 { return float32(1e-24 / float64(channels)) }

// channelNorm is the VAE's RMS_norm: every pixel's channel vector scaled to RMS 1, times gamma
// (the op set's ChannelRMSNorm, over the channel-first activation in place of a transpose).
func (o ops) channelNorm(x, gamma ml.Tensor) (ml.Tensor, error) {
	c, h, w := chw(x)
	dst, err := o.b.New(c, h, w)
	if err != nil {
		return nil, err
	}
	if err := o.b.ChannelRMSNorm(dst, x, gamma, normEps(c)); err != nil {
		o.b.Free(dst)
		return nil, err
	}
	return dst, nil
}
