// Package pipelinemetal places the pipeline's networks on a Metal device (the Mac's, or the
// emulator's in tests): the denoiser through qi21metal, the text encoder through qwen3vlmetal and
// the VAE through vaemetal, each reading its weights in place from the model file's mapping and
// falling back to the network on the pipeline's backend when the device declines the model or a
// call. It is the only part of the pipeline that knows Metal: engine/pipeline sees a
// pipeline.Placement and structured pipeline.Declines. One file per network.
package pipelinemetal

import (
	"easel/engine/ml/metal"
	"easel/engine/pipeline"
	"easel/engine/qi21/qi21metal"
	"easel/kernels/device"
)

// Options are the pipeline options that run all three networks on dev, reading the weights in
// place from mapping ((*cmf.File).Bytes()); denoiser configures the Metal denoiser.
func Options(dev device.Device, mapping []byte, denoiser qi21metal.Options) pipeline.Options {
	return pipeline.Options{
		Denoiser:    Denoiser(dev, mapping, denoiser),
		VAE:         VAE(dev, mapping),
		TextEncoder: TextEncoder(dev, mapping),
	}
}

// decline is the pipeline's view of the device's decline.
func decline(d *metal.Declined) pipeline.Decline {
	return pipeline.Decline{Device: "Metal", Reason: d.Reason}
}

// reporter turns the device runner's declines into the site's.
func reporter(s pipeline.Site) func(*metal.Declined) {
	return func(d *metal.Declined) {
		if s.Declined != nil {
			s.Declined(decline(d))
		}
	}
}
