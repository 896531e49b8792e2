package ml

import (
	"context"
	"fmt"

	"easel/engine/quant"
)

// WithContext is the networks' one cancellation wrapper: a backend whose heavy ops (linear layers,
// attention, convolutions) first check ctx, so a cancelled call returns within one op, not one
// layer. The error wraps ctx's ("stopped: context canceled"). Without a cancellable context it
// returns be itself.
func WithContext(be Backend, ctx context.Context) Backend {
	if ctx == nil || ctx.Done() == nil {
		return be
	}
	return cancellable{be, ctx}
}

type cancellable struct {
	Backend
	ctx context.Context
}

func (c cancellable) stopped() error {
	if err := c.ctx.Err(); err != nil {
		return fmt.Errorf("stopped: %w", err)
	}
	return nil
}

func (c cancellable) Linear(dst, x Tensor, w *quant.Tensor) error {
	if err := c.stopped(); err != nil {
		return err
	}
	return c.Backend.Linear(dst, x, w)
}

func (c cancellable) LinearBatch(dst []Tensor, x Tensor, w []*quant.Tensor) error {
	if err := c.stopped(); err != nil {
		return err
	}
	return c.Backend.LinearBatch(dst, x, w)
}

func (c cancellable) Attention(dst, q, k, v, pk, pv Tensor, spec AttnSpec) error {
	if err := c.stopped(); err != nil {
		return err
	}
	return c.Backend.Attention(dst, q, k, v, pk, pv, spec)
}

func (c cancellable) Conv2D(dst, x Tensor, w *quant.Tensor, bias Tensor, spec ConvSpec) error {
	if err := c.stopped(); err != nil {
		return err
	}
	return c.Backend.Conv2D(dst, x, w, bias, spec)
}
