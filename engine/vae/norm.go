package vae

import "easel/engine/ml"

// normEps makes RMSNorm reproduce F.normalize(x, dim=channels)·√C: x·√C / max(‖x‖₂, 1e-12) equals
// x / sqrt(‖x‖₂²/C + eps) with eps = 1e-24/C wherever ‖x‖₂ ≥ 1e-12, and both give 0 for x = 0.
func normEps(channels int) float32 { return float32(1e-24 / float64(channels)) }

// apply is the VAE's RMS_norm: every pixel's channel vector scaled to RMS 1, times gamma (the op
// set's ChannelRMSNorm, over the channel-first activation in place of a transpose).
func (n rmsNorm) apply(e *ml.Scope, x ml.Tensor) ml.Tensor {
	if e.Err() != nil {
		return nil
	}
	c, h, w := chw(x)
	dst := e.Temp(c, h, w)
	e.Do(e.B.ChannelRMSNorm(dst, x, n.Gamma, normEps(c)))
	return dst
}

// act is SiLU(norm(x)), the pre-activation of every convolution in a residual block and of
// conv_out.
func (n rmsNorm) act(e *ml.Scope, x ml.Tensor) ml.Tensor {
	y := n.apply(e, x)
	if y != nil {
		e.Do(e.B.SiLU(y, y))
	}
	return y
}
