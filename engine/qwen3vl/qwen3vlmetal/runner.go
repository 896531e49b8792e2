package qwen3vlmetal

import (
	"context"
	"errors"
	"fmt"

	"easel/engine/ml/metal"
	"easel/engine/qwen3vl"
)

// Runner encodes prompts on the device when it accepts the work and on the CPU encoder when it
// declines (or when there is no device encoder). A CPU run is exactly the CPU encoder's result.
type Runner struct {
	gpu       *Encoder         // nil: everything runs on cpu
	cpu       *qwen3vl.Encoder // the same encoder on its host backend
	onDecline func(*metal.Declined)
}

// NewRunner pairs a device encoder (nil for none) with the CPU encoder. onDecline, when not nil,
// is told each decline.
func NewRunner(gpu *Encoder, cpu *qwen3vl.Encoder, onDecline func(*metal.Declined)) (*Runner, error) {
	if cpu == nil {
		return nil, errors.New("qwen3vlmetal.NewRunner: no CPU encoder to fall back on")
	}
	if gpu != nil {
		gpu.host = cpu // Generate prepares prompt rows (and images) on the host
	}
	return &Runner{gpu: gpu, cpu: cpu, onDecline: onDecline}, nil
}

// Device is the device encoder, or nil when everything runs on the CPU.
func (r *Runner) Device() *Encoder { return r.gpu }

// Close frees the device encoder's memory.
func (r *Runner) Close() {
	if r.gpu != nil {
		r.gpu.Close()
	}
}

// Encode encodes on the device or, when it declines, on the CPU.
func (r *Runner) Encode(ctx context.Context, ids []int32, images []qwen3vl.VisionInput) (hidden []float32, onDevice bool, err error) {
	var device func() ([]float32, error)
	if r.gpu != nil {
		device = func() ([]float32, error) {
			h, err := r.gpu.Encode(ctx, ids, images)
			if err != nil {
				return nil, fmt.Errorf("the text encoder on %s: %w", r.gpu.DeviceName(), err)
			}
			return h, nil
		}
	}
	return metal.Try(device, func() ([]float32, error) { return r.cpu.Encode(ctx, ids, images) }, r.onDecline)
}
