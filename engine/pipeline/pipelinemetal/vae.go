package pipelinemetal

import (
	"context"
	"errors"
	"fmt"

	"easel/engine/ml/metal"
	"easel/engine/pipeline"
	"easel/engine/vae"
	"easel/engine/vae/vaemetal"
	"easel/kernels/device"
)

// VAE places the autoencoder on dev, reading its f16 weights in place from mapping. When the
// device declines the model the CPU model runs it and the notice says why; when it declines one
// decode or encode (too little memory left), that call runs on the CPU and the site hears why.
func VAE(dev device.Device, mapping []byte) pipeline.Place[pipeline.VAE, *vae.Model] {
	return func(s pipeline.Site, cpu *vae.Model) (pipeline.VAE, pipeline.Placement, error) {
		v, err := vaemetal.New(dev, s.Model, mapping)
		var declined *metal.Declined
		if errors.As(err, &declined) {
			return cpu, pipeline.Placement{Notice: decline(declined).Notice("the VAE")}, nil
		}
		if err != nil {
			return nil, pipeline.Placement{}, fmt.Errorf("the Metal VAE on %s: %w", dev.Name(), err)
		}
		r, err := vaemetal.NewRunner(v, cpu, reporter(s))
		if err != nil {
			v.Close()
			return nil, pipeline.Placement{}, err
		}
		v.SetOtherResident(s.Others)
		v.SetOnRetry(recoverer{s}.retried)
		return vaeRunner{r}, pipeline.Placement{
			Notice:     "the VAE runs on Metal (" + v.DeviceName() + ")",
			Device:     v.DeviceName(),
			DeviceTime: v.DeviceTime,
			Timings:    v.Timings,
			GPUClasses: v.GPUClasses,
			Close:      r.Close,
		}, nil
	}
}

// vaeRunner is the device VAE with its CPU fallback.
type vaeRunner struct{ r *vaemetal.Runner }

func (v vaeRunner) DecodeWith(ctx context.Context, zn *vae.Latents, tiling *vae.Tiling) (*vae.Image, error) {
	img, _, err := v.r.Decode(ctx, zn, tiling)
	return img, err
}

func (v vaeRunner) EncodeWith(ctx context.Context, img *vae.Image, tiling *vae.Tiling) (mode, normalized *vae.Latents, err error) {
	mode, normalized, _, err = v.r.Encode(ctx, img, tiling)
	return mode, normalized, err
}
