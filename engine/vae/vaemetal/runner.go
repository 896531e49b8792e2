package vaemetal

import (
	"context"
	"errors"
	"fmt"

	"easel/engine/ml/metal"
	"easel/engine/vae"
)

// Runner decodes and encodes on the device when it accepts the work and on the CPU model when it
// declines (or when there is no device VAE), as qi21metal.Runner does for the denoiser. A CPU run is
// exactly the CPU model's result: the device does not touch it.
type Runner struct {
	gpu       *VAE       // nil: everything runs on cpu
	cpu       *vae.Model // the same autoencoder on its host backend
	onDecline func(*metal.Declined)
}

// NewRunner pairs a device VAE (nil for none) with the CPU model. onDecline, when not nil, is told
// each decline.
func NewRunner(gpu *VAE, cpu *vae.Model, onDecline func(*metal.Declined)) (*Runner, error) {
	if cpu == nil {
		return nil, errors.New("vaemetal.NewRunner: no CPU model to fall back on")
	}
	return &Runner{gpu: gpu, cpu: cpu, onDecline: onDecline}, nil
}

// Device is the device VAE, or nil when everything runs on the CPU.
func (r *Runner) Device() *VAE { return r.gpu }

// Close frees the device VAE's memory.
func (r *Runner) Close() {
	if r.gpu != nil {
		r.gpu.Close()
	}
}

// Decode decodes in one piece (tiling nil) or in tiles, on the device or, when it declines, on
// the CPU.
func (r *Runner) Decode(ctx context.Context, zn *vae.Latents, tiling *vae.Tiling) (img *vae.Image, onDevice bool, err error) {
	var device func() (*vae.Image, error)
	if r.gpu != nil {
		device = func() (*vae.Image, error) {
			img, err := r.gpu.DecodeWith(ctx, zn, tiling)
			if err != nil {
				return nil, fmt.Errorf("the VAE decode on %s: %w", r.gpu.DeviceName(), err)
			}
			return img, nil
		}
	}
	return metal.Try(device, func() (*vae.Image, error) { return r.cpu.DecodeWith(ctx, zn, tiling) }, r.onDecline)
}

// Encode encodes in one piece (tiling nil) or in tiles, on the device or, when it declines, on
// the CPU.
func (r *Runner) Encode(ctx context.Context, img *vae.Image, tiling *vae.Tiling) (mode, normalized *vae.Latents, onDevice bool, err error) {
	var device func() ([2]*vae.Latents, error)
	if r.gpu != nil {
		device = func() ([2]*vae.Latents, error) {
			mode, normalized, err := r.gpu.EncodeWith(ctx, img, tiling)
			if err != nil {
				return [2]*vae.Latents{}, fmt.Errorf("the VAE encode on %s: %w", r.gpu.DeviceName(), err)
			}
			return [2]*vae.Latents{mode, normalized}, nil
		}
	}
	out, onDevice, err := metal.Try(device, func() ([2]*vae.Latents, error) {
		mode, normalized, err := r.cpu.EncodeWith(ctx, img, tiling)
		return [2]*vae.Latents{mode, normalized}, err
	}, r.onDecline)
	return out[0], out[1], onDevice, err
}
