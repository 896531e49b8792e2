package qi21

import (
	"context"
	"fmt"

	"easel/engine/ml"
	"easel/engine/quant"
)

// cancellable stops a pass at the next heavy op (linear layers, attention) once its context is
// done, so a cancelled generation returns within one op, not one step.
type cancellable struct {
	ml.Backend
	ctx context.Context
}

func withContext(be ml.Backend, ctx context.Context) ml.Backend {
	if ctx == nil || ctx.Done() == nil {
		return be
	}
	return cancellable{be, ctx}
}

func (c cancellable) stopped() error {
	if err := c.ctx.Err(); err != nil {
		return fmt.Errorf("stopped: %w", err)
	}
	return nil
}

func (c cancellable) Linear(dst, x ml.Tensor, w *quant.Tensor) error {
	if err := c.stopped(); err != nil {
		return err
	}
	return c.Backend.Linear(dst, x, w)
}

func (c cancellable) LinearBatch(dst []ml.Tensor, x ml.Tensor, w []*quant.Tensor) error {
	if err := c.stopped(); err != nil {
		return err
	}
	return c.Backend.LinearBatch(dst, x, w)
}

func (c cancellable) Attention(dst, q, k, v, pk, pv ml.Tensor, spec ml.AttnSpec) error {
	if err := c.stopped(); err != nil {
		return err
	}
	return c.Backend.Attention(dst, q, k, v, pk, pv, spec)
}
