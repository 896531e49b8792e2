package hires

import (
	"context"
	"image"

	"easel/app/upscalers"
)

// FirstStage is the image the second pass starts from at w×h: the finished image resized with
// Lanczos (Resize) when up is nil, else upscaled by the learned upscaler up (its network, then
// Lanczos to exactly w×h; progress per tile, cancelled between tiles by ctx) — A1111's hr_upscaler.
// The report says how the upscaler ran (zero for Lanczos).
func FirstStage(ctx context.Context, img image.Image, w, h int, up *upscalers.Runner, progress func(upscalers.Progress)) (*image.NRGBA, upscalers.Report, error) {
	if up == nil {
		return Resize(img, w, h), upscalers.Report{}, nil
	}
	return up.Upscale(ctx, img, upscalers.Request{Width: w, Height: h, Progress: progress})
}
