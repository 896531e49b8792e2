package pipelinemetal

import (
	"context"
	"errors"
	"fmt"

	"easel/engine/ml/metal"
	"easel/engine/pipeline"
	"easel/engine/qwen3vl"
	"easel/engine/qwen3vl/qwen3vlmetal"
	"easel/kernels/device"
)

// TextEncoder places the Qwen3-VL encoder (and the vision tower) on dev, reading its weights in
// place from mapping. When the device declines the model the CPU encoder runs it and the notice
// says why; when it declines one prompt, that prompt runs on the CPU and the site hears why.
func TextEncoder(dev device.Device, mapping []byte) pipeline.Place[pipeline.TextEncoder, *qwen3vl.Encoder] {
	return func(s pipeline.Site, cpu *qwen3vl.Encoder) (pipeline.TextEncoder, pipeline.Placement, error) {
		e, err := qwen3vlmetal.New(dev, s.Model, mapping)
		var declined *metal.Declined
		if errors.As(err, &declined) {
			return cpu, pipeline.Placement{Notice: decline(declined).Notice("the text encoder")}, nil
		}
		if err != nil {
			return nil, pipeline.Placement{}, fmt.Errorf("the Metal text encoder on %s: %w", dev.Name(), err)
		}
		r, err := qwen3vlmetal.NewRunner(e, cpu, reporter(s))
		if err != nil {
			e.Close()
			return nil, pipeline.Placement{}, err
		}
		e.SetOtherResident(s.Others)
		e.SetOnRetry(recoverer{s}.retried)
		return textRunner{r}, pipeline.Placement{
			Notice:     "the text encoder runs on Metal (" + e.DeviceName() + ")",
			Device:     e.DeviceName(),
			DeviceTime: e.DeviceTime,
			Timings:    e.Timings,
			GPUClasses: e.GPUClasses,
			Close:      r.Close,
		}, nil
	}
}

// textRunner is the device encoder with its CPU fallback.
type textRunner struct{ r *qwen3vlmetal.Runner }

func (t textRunner) Encode(ctx context.Context, ids []int32, images []qwen3vl.VisionInput) ([]float32, error) {
	hidden, _, err := t.r.Encode(ctx, ids, images)
	return hidden, err
}
