package studiogen

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
	"regexp"

	"easel/app"
	"easel/app/imagefile"
	"easel/app/studio"
	"easel/engine/pipeline"
)

// Check refuses a request that names an input other than by content (studio.ValidInputName):
// nothing is fetched or written for it.
func (sr *PipelineRequest) Check() error {
	names := append([]string{}, sr.Images...)
	for _, n := range []string{sr.InitImage, sr.InitMask, sr.Noise} {
		if n != "" {
			names = append(names, n)
		}
	}
	for _, l := range sr.LoRAFiles {
		names = append(names, l.Input)
	}
	return studio.CheckInputNames(names...)
}

// loraFileName is the base name a LoRA is written under in its own folder: its own name when
// that is a plain file name, else a fixed one.
var loraFileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 ._()+-]{0,127}$`)

// Request is the pipeline request a studio job carries, its inputs fetched from the hub (LoRA
// files are written under dir, in lora-N folders): what a worker runs, `easel studio join` or a
// lent window alike. The request is checked first (Check).
func (sr *PipelineRequest) Request(ctx context.Context, inputs studio.Inputs, dir string) (pipeline.Request, error) {
	if err := sr.Check(); err != nil {
		return pipeline.Request{}, err
	}
	get := func(name string) (image.Image, error) {
		data, err := inputs(ctx, name)
		if err != nil {
			return nil, err
		}
		return png.Decode(bytes.NewReader(data))
	}
	req := pipeline.Request{Prompt: sr.Prompt, NegativePrompt: sr.Negative, Width: sr.Width, Height: sr.Height, Aspect: sr.Aspect,
		Resolution: sr.Resolution, Steps: sr.Steps, CFG: sr.CFG, Seed: sr.Seed, VariationSeed: sr.VariationSeed,
		VariationStrength: sr.VariationStrength, Sigmas: sr.Sigmas, Scheduler: sr.Scheduler}
	for _, name := range sr.Images {
		im, err := get(name)
		if err != nil {
			return req, err
		}
		req.Images = append(req.Images, NRGBA(im))
	}
	if sr.InitImage != "" {
		im, err := get(sr.InitImage)
		if err != nil {
			return req, err
		}
		req.Init = &pipeline.InitImage{Image: NRGBA(im), Strength: sr.InitStrength}
		if sr.InitMask != "" {
			m, err := get(sr.InitMask)
			if err != nil {
				return req, err
			}
			g, ok := m.(*image.Gray)
			if !ok {
				return req, errors.New("the mask is not a grey PNG")
			}
			req.Init.Mask = g
		}
	}
	if sr.Noise != "" {
		data, err := inputs(ctx, sr.Noise)
		if err != nil {
			return req, err
		}
		req.Noise = make([]float32, len(data)/4)
		for i := range req.Noise {
			req.Noise[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
	}
	for i, l := range sr.LoRAFiles {
		data, err := inputs(ctx, l.Input)
		if err != nil {
			return req, err
		}
		sub := filepath.Join(dir, fmt.Sprintf("lora-%d", i+1))
		if err := os.Mkdir(sub, 0o700); err != nil {
			return req, err
		}
		name := l.Name
		if !loraFileName.MatchString(name) {
			name = "lora.safetensors"
		}
		path := filepath.Join(sub, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return req, err
		}
		req.LoRAFiles = append(req.LoRAFiles, pipeline.LoRAFile{Path: path, Strength: l.Strength})
	}
	return req, nil
}

// Settings are the PNG's record of the job's result rendered with this model (its file name
// and fingerprint) on this backend.
func (sr *PipelineRequest) Settings(res *pipeline.Result, model, modelHash, backend string) *imagefile.Settings {
	neg := sr.Negative
	if res.CFG <= 1 {
		neg = "" // no guidance: the negative prompt was not used
	}
	return &imagefile.Settings{Prompt: sr.Prompt, NegativePrompt: neg, Width: res.Width, Height: res.Height,
		Steps: res.Steps, CFG: res.CFG, Seed: res.Seed, Sigmas: res.Sigmas, Resolution: res.Resolution, Sampler: "Euler",
		Model: filepath.Base(model), ModelHash: modelHash, EaselVersion: app.Version, Backend: backend,
		VariationSeed: res.VariationSeed, VariationStrength: res.VariationStrength}
}
