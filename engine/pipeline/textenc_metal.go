package pipeline

import (
	"errors"
	"fmt"
	"time"

	"easel/engine/ml/metal"
	"easel/engine/qwen3vl"
	"easel/engine/qwen3vl/qwen3vlmetal"
	"easel/kernels/device"
)

// TextEncoderPlacement is where the text encoder runs: a qwen3vlmetal.Runner (the device encoder,
// or none) and a sentence about it for the user ("" when it runs on the backend as usual).
type TextEncoderPlacement struct {
	Runner *qwen3vlmetal.Runner
	Notice string
}

// MetalTextEncoder is an Options.TextEncoder that runs the Qwen3-VL encoder (and the vision tower)
// on a Metal device, reading its weights in place from mapping ((*cmf.File).Bytes()). When the
// device declines the model the CPU encoder runs it and the notice says why; when it declines one
// prompt, that prompt runs on the CPU and Run reports the reason as a notice.
func MetalTextEncoder(dev device.Device, mapping []byte) func(m ModelFile, cpu *qwen3vl.Encoder, logf func(string, ...any)) (TextEncoderPlacement, error) {
	return func(m ModelFile, cpu *qwen3vl.Encoder, logf func(string, ...any)) (TextEncoderPlacement, error) {
		e, err := qwen3vlmetal.New(dev, m, mapping)
		var declined *metal.Declined
		if errors.As(err, &declined) {
			r, err := qwen3vlmetal.NewRunner(nil, cpu, nil)
			return TextEncoderPlacement{r, "Metal declined the text encoder: " + declined.Reason + "; the CPU runs it instead"}, err
		}
		if err != nil {
			return TextEncoderPlacement{}, fmt.Errorf("the Metal text encoder on %s: %w", dev.Name(), err)
		}
		r, err := qwen3vlmetal.NewRunner(e, cpu, logf)
		if err != nil {
			e.Close()
			return TextEncoderPlacement{}, err
		}
		return TextEncoderPlacement{r, "the text encoder runs on Metal (" + e.DeviceName() + ")"}, nil
	}
}

// textStage is the pipeline's side of the text encoder's placement.
type textStage struct {
	r      *qwen3vlmetal.Runner
	notice string
	declineLog
}

// deviceTime is the device encoder's GPU time so far (0 without one).
func (s *textStage) deviceTime() time.Duration {
	if e := s.r.Device(); e != nil {
		return e.DeviceTime()
	}
	return 0
}
