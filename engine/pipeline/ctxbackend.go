package pipeline

import (
	"context"
	"fmt"
	"sync/atomic"

	"easel/engine/ml"
	"easel/engine/quant"
)

// cancellable wraps a backend so that every op first checks the context of the run in progress:
// once it is cancelled, the next op returns its error without running, so cancellation takes
// effect within one op whichever network is running (the text encoder checks only between
// layers, the VAE between blocks). The networks are bound to the wrapper once; each Run sets
// its context with begin and clears it with end.
type cancellable struct {
	inner ml.Backend
	ctx   atomic.Pointer[context.Context]
}

// begin makes ops answer to ctx until end.
func (c *cancellable) begin(ctx context.Context) { c.ctx.Store(&ctx) }

// end detaches the run's context.
func (c *cancellable) end() { c.ctx.Store(nil) }

// check is the per-op test.
func (c *cancellable) check(op string) error {
	p := c.ctx.Load()
	if p == nil {
		return nil
	}
	if err := (*p).Err(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// wrapBackend returns the wrapper and its context switch (the same value).
func wrapBackend(be ml.Backend) (ml.Backend, *cancellable) {
	c := &cancellable{inner: be}
	return c, c
}

func (c *cancellable) ChannelRMSNorm(dst, x, gamma ml.Tensor, eps float32) error {
	if err := c.check("ChannelRMSNorm"); err != nil {
		return err
	}
	return c.inner.ChannelRMSNorm(dst, x, gamma, eps)
}

func (c *cancellable) GELUErf(dst, x ml.Tensor) error {
	if err := c.check("GELUErf"); err != nil {
		return err
	}
	return c.inner.GELUErf(dst, x)
}

func (c *cancellable) Name() string         { return c.inner.Name() }
func (c *cancellable) Timings() *ml.Timings { return c.inner.Timings() }
func (c *cancellable) Free(t ml.Tensor)     { c.inner.Free(t) }
func (c *cancellable) New(shape ...int) (ml.Tensor, error) {
	if err := c.check("New"); err != nil {
		return nil, err
	}
	return c.inner.New(shape...)
}

func (c *cancellable) Upload(data []float32, shape ...int) (ml.Tensor, error) {
	if err := c.check("Upload"); err != nil {
		return nil, err
	}
	return c.inner.Upload(data, shape...)
}

func (c *cancellable) Download(t ml.Tensor) ([]float32, error) {
	if err := c.check("Download"); err != nil {
		return nil, err
	}
	return c.inner.Download(t)
}

// Slice makes a view and does no work, so it is not a cancellation point.
func (c *cancellable) Slice(t ml.Tensor, offset int, shape ...int) (ml.Tensor, error) {
	return c.inner.Slice(t, offset, shape...)
}

func (c *cancellable) Linear(dst, x ml.Tensor, w *quant.Tensor) error {
	if err := c.check("Linear"); err != nil {
		return err
	}
	return c.inner.Linear(dst, x, w)
}

func (c *cancellable) LinearBatch(dst []ml.Tensor, x ml.Tensor, w []*quant.Tensor) error {
	if err := c.check("LinearBatch"); err != nil {
		return err
	}
	return c.inner.LinearBatch(dst, x, w)
}

func (c *cancellable) GatedResidualModNorm(x, y, gate, dst, scale ml.Tensor, eps float32) error {
	if err := c.check("GatedResidualModNorm"); err != nil {
		return err
	}
	return c.inner.GatedResidualModNorm(x, y, gate, dst, scale, eps)
}

func (c *cancellable) RMSNorm(dst, x, w ml.Tensor, eps float32, zeroCentred bool) error {
	if err := c.check("RMSNorm"); err != nil {
		return err
	}
	return c.inner.RMSNorm(dst, x, w, eps, zeroCentred)
}

func (c *cancellable) LayerNorm(dst, x, w, b ml.Tensor, eps float32) error {
	if err := c.check("LayerNorm"); err != nil {
		return err
	}
	return c.inner.LayerNorm(dst, x, w, b, eps)
}

func (c *cancellable) HeadNormRoPE(x ml.Tensor, heads, headDim int, w ml.Tensor, eps float32, rope *ml.Rope) error {
	if err := c.check("HeadNormRoPE"); err != nil {
		return err
	}
	return c.inner.HeadNormRoPE(x, heads, headDim, w, eps, rope)
}

func (c *cancellable) Attention(dst, q, k, v, prefixK, prefixV ml.Tensor, spec ml.AttnSpec) error {
	if err := c.check("Attention"); err != nil {
		return err
	}
	return c.inner.Attention(dst, q, k, v, prefixK, prefixV, spec)
}

func (c *cancellable) SiLU(dst, x ml.Tensor) error {
	if err := c.check("SiLU"); err != nil {
		return err
	}
	return c.inner.SiLU(dst, x)
}

func (c *cancellable) GELUTanh(dst, x ml.Tensor) error {
	if err := c.check("GELUTanh"); err != nil {
		return err
	}
	return c.inner.GELUTanh(dst, x)
}

func (c *cancellable) SwiGLU(dst, gate, up ml.Tensor) error {
	if err := c.check("SwiGLU"); err != nil {
		return err
	}
	return c.inner.SwiGLU(dst, gate, up)
}

func (c *cancellable) Add(dst, a, b ml.Tensor) error {
	if err := c.check("Add"); err != nil {
		return err
	}
	return c.inner.Add(dst, a, b)
}

func (c *cancellable) Mul(dst, a, b ml.Tensor) error {
	if err := c.check("Mul"); err != nil {
		return err
	}
	return c.inner.Mul(dst, a, b)
}

func (c *cancellable) Scale(dst, x ml.Tensor, s float32) error {
	if err := c.check("Scale"); err != nil {
		return err
	}
	return c.inner.Scale(dst, x, s)
}

func (c *cancellable) Copy(dst, src ml.Tensor) error {
	if err := c.check("Copy"); err != nil {
		return err
	}
	return c.inner.Copy(dst, src)
}

func (c *cancellable) Transpose(dst, x ml.Tensor) error {
	if err := c.check("Transpose"); err != nil {
		return err
	}
	return c.inner.Transpose(dst, x)
}

func (c *cancellable) Conv2D(dst, x ml.Tensor, w *quant.Tensor, bias ml.Tensor, spec ml.ConvSpec) error {
	if err := c.check("Conv2D"); err != nil {
		return err
	}
	return c.inner.Conv2D(dst, x, w, bias, spec)
}

func (c *cancellable) UpsampleNearest(dst, x ml.Tensor, factor int) error {
	if err := c.check("UpsampleNearest"); err != nil {
		return err
	}
	return c.inner.UpsampleNearest(dst, x, factor)
}
