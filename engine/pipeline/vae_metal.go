package pipeline

import (
	"errors"
	"fmt"
	"time"

	"easel/engine/ml/metal"
	"easel/engine/vae"
	"easel/engine/vae/vaemetal"
	"easel/kernels/device"
)

// VAEPlacement is where the autoencoder runs: a vaemetal.Runner (the device VAE, or none) and a
// sentence about it for the user ("" when it runs on the backend as usual).
type VAEPlacement struct {
	Runner *vaemetal.Runner
	Notice string
}

// MetalVAE is an Options.VAE that runs the autoencoder on a Metal device (the Mac's, or the
// emulator's in tests), reading its f16 weights in place from mapping ((*cmf.File).Bytes()).
// When the device declines the model the CPU model runs it and the notice says why; when it
// declines one decode or encode (too little memory left), that call runs on the CPU, and Run
// reports the reason as a notice.
func MetalVAE(dev device.Device, mapping []byte) func(m ModelFile, cpu *vae.Model, logf func(string, ...any)) (VAEPlacement, error) {
	return func(m ModelFile, cpu *vae.Model, logf func(string, ...any)) (VAEPlacement, error) {
		v, err := vaemetal.New(dev, m, mapping)
		var declined *metal.Declined
		if errors.As(err, &declined) {
			r, err := vaemetal.NewRunner(nil, cpu, nil)
			return VAEPlacement{r, "Metal declined the VAE: " + declined.Reason + "; the CPU runs it instead"}, err
		}
		if err != nil {
			return VAEPlacement{}, fmt.Errorf("the Metal VAE on %s: %w", dev.Name(), err)
		}
		r, err := vaemetal.NewRunner(v, cpu, logf)
		if err != nil {
			v.Close()
			return VAEPlacement{}, err
		}
		return VAEPlacement{r, "the VAE runs on Metal (" + v.DeviceName() + ")"}, nil
	}
}

// vaeStage is the pipeline's side of the VAE placement: the runner and the declines of the call
// in progress, which Run turns into notices.
type vaeStage struct {
	r      *vaemetal.Runner
	notice string
	declineLog
}

// deviceTime is the device VAE's GPU time so far (0 without one).
func (s *vaeStage) deviceTime() time.Duration {
	if v := s.r.Device(); v != nil {
		return v.DeviceTime()
	}
	return 0
}
