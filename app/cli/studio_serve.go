package cli

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"

	"easel/app"
	"easel/app/imagefile"
	"easel/app/studio"
	"easel/app/studiogen"
	"easel/engine/pipeline"
)

// renderPipeline renders a studiogen.PipelineRequest (the worker's side of serve --studio).
func (r *studioRenderer) renderPipeline(ctx context.Context, sr *studiogen.PipelineRequest, previews bool, inputs studio.Inputs, dir string, progress func(studio.Step)) ([]byte, error) {
	get := func(name string) (image.Image, error) {
		data, err := inputs(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("fetching input %s from the hub: %w", name, err)
		}
		return png.Decode(bytes.NewReader(data))
	}
	req := pipeline.Request{Prompt: sr.Prompt, NegativePrompt: sr.Negative, Width: sr.Width, Height: sr.Height, Aspect: sr.Aspect,
		Resolution: sr.Resolution, Steps: sr.Steps, CFG: sr.CFG, Seed: sr.Seed, VariationSeed: sr.VariationSeed,
		VariationStrength: sr.VariationStrength, Sigmas: sr.Sigmas, Scheduler: sr.Scheduler}
	for _, name := range sr.Images {
		im, err := get(name)
		if err != nil {
			return nil, err
		}
		req.Images = append(req.Images, studiogen.NRGBA(im))
	}
	if sr.InitImage != "" {
		im, err := get(sr.InitImage)
		if err != nil {
			return nil, err
		}
		req.Init = &pipeline.InitImage{Image: studiogen.NRGBA(im), Strength: sr.InitStrength}
		if sr.InitMask != "" {
			m, err := get(sr.InitMask)
			if err != nil {
				return nil, err
			}
			g, ok := m.(*image.Gray)
			if !ok {
				return nil, errors.New("the mask is not a grey PNG")
			}
			req.Init.Mask = g
		}
	}
	if sr.Noise != "" {
		data, err := inputs(ctx, sr.Noise)
		if err != nil {
			return nil, err
		}
		req.Noise = make([]float32, len(data)/4)
		for i := range req.Noise {
			req.Noise[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
	}
	for _, l := range sr.LoRAFiles {
		data, err := inputs(ctx, l.Input)
		if err != nil {
			return nil, err
		}
		sub := filepath.Join(dir, l.Input)
		os.MkdirAll(sub, 0o700)
		path := filepath.Join(sub, filepath.Base(l.Name))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
		req.LoRAFiles = append(req.LoRAFiles, pipeline.LoRAFile{Path: path, Strength: l.Strength})
	}
	p, backendName, err := r.pipeline(ctx)
	if err != nil {
		return nil, err
	}
	if previews {
		req.Preview = r.previewFunc()
	}
	events := make(chan pipeline.Event)
	drained := make(chan struct{})
	go func() {
		for ev := range events {
			if ev.Stage == pipeline.StageDenoising && ev.Step > 0 {
				st := studio.Step{N: ev.Step, Of: ev.Steps}
				if ev.Preview != nil && ev.Preview.Image != nil {
					st.Preview = studiogen.EncodePNG(ev.Preview.Image)
				}
				progress(st)
			}
		}
		close(drained)
	}()
	res, err := p.Run(ctx, req, events)
	<-drained
	if err != nil {
		return nil, err
	}
	s := &imagefile.Settings{Prompt: sr.Prompt, NegativePrompt: negativeUsed(sr.Negative, res.CFG), Width: res.Width, Height: res.Height,
		Steps: res.Steps, CFG: res.CFG, Seed: res.Seed, Sigmas: res.Sigmas, Resolution: res.Resolution, Sampler: "Euler",
		Model: filepath.Base(r.modelPath), ModelHash: r.fingerprint, EaselVersion: app.Version, Backend: backendName,
		VariationSeed: res.VariationSeed, VariationStrength: res.VariationStrength}
	path := filepath.Join(dir, "out.png")
	if err := imagefile.WriteFile(path, res.Image, s); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}
