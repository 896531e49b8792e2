package qwen3vl

import (
	"context"
	"fmt"
)

// EncodeImage runs the vision tower alone over one condition image: the main merger's output
// (one row of the language model's width per merged token, in merge-window order) and each
// DeepStack merger's, on the host. Encode does this inside; tests of a device backend compare the
// tower on its own with it.
func (e *Encoder) EncodeImage(ctx context.Context, img VisionInput) (embeds []float32, deepstack [][]float32, err error) {
	if e.vision == nil {
		return nil, nil, fmt.Errorf("vision tower: %w", e.visionErr)
	}
	if _, err := e.vision.checkImages([]VisionInput{img}); err != nil {
		return nil, nil, fmt.Errorf("vision tower: %w", err)
	}
	out, err := e.vision.encode(ctx, []VisionInput{img})
	if err != nil {
		return nil, nil, fmt.Errorf("vision tower: %w", err)
	}
	defer out.free(e.backend)
	if embeds, err = e.backend.Download(out.embeds); err != nil {
		return nil, nil, fmt.Errorf("vision tower: %w", err)
	}
	for i, t := range out.deepstack {
		v, err := e.backend.Download(t)
		if err != nil {
			return nil, nil, fmt.Errorf("vision tower: DeepStack merger %d: %w", i, err)
		}
		deepstack = append(deepstack, v)
	}
	return embeds, deepstack, nil
}
