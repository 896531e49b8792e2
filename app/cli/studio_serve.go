package cli

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"sync"

	"easel/app"
	"easel/app/imagefile"
	"easel/app/studio"
	"easel/engine/pipeline"
	"easel/engine/sched"
)

// studioPipelineRequest is a pipeline.Request as a studio job carries it (`easel serve --studio`:
// the A1111 API builds requests, not command lines): images as PNGs in the hub's inputs bucket.
type studioPipelineRequest struct {
	Prompt            string          `json:"prompt"`
	Negative          string          `json:"negative,omitempty"`
	Images            []string        `json:"images,omitempty"`
	InitImage         string          `json:"init_image,omitempty"`
	InitStrength      float64         `json:"init_strength,omitempty"`
	InitMask          string          `json:"init_mask,omitempty"`
	Width             int             `json:"width,omitempty"`
	Height            int             `json:"height,omitempty"`
	Aspect            float64         `json:"aspect,omitempty"`
	Resolution        int             `json:"resolution,omitempty"`
	Steps             int             `json:"steps,omitempty"`
	CFG               float64         `json:"cfg,omitempty"`
	Seed              uint64          `json:"seed"`
	VariationSeed     uint64          `json:"variation_seed,omitempty"`
	VariationStrength float64         `json:"variation_strength,omitempty"`
	Sigmas            []float64       `json:"sigmas,omitempty"`
	Scheduler         *sched.Config   `json:"scheduler,omitempty"`
	LoRAFiles         []studioLoRARef `json:"lora_files,omitempty"`
	// Noise is the starting noise itself (A1111's variation seeds are mixed into it by serve),
	// float32 little-endian in the inputs bucket.
	Noise string `json:"noise,omitempty"`
}

type studioLoRARef struct {
	Input, Name string
	Strength    float64
}

// studioGenerator is a jobs.Generator that renders on the studio: each image of a request is a
// job of its own (its own seed and variation seed), the batch's images come back in order.
type studioGenerator struct {
	conn *studio.Conn
	fp   studio.Fingerprint
	mu   sync.Mutex // one request at a time (the queue runs one job at a time anyway)

	smu    sync.Mutex                       // guards spread
	spread map[<-chan struct{}]*spreadImage // the images of spread requests, by Stop (studio_spread.go)
}

// newStudioGenerator connects `easel serve --studio` to the hub as a client, for the model file
// with this fingerprint.
func newStudioGenerator(url, token, pin, modelFingerprint string, say func(string)) (*studioGenerator, error) {
	c, err := studio.Dial(context.Background(), url, studio.DialOptions{Role: studio.RoleClient, Token: token, Pin: pin, OnEvent: say})
	if err != nil {
		return nil, err
	}
	return &studioGenerator{conn: c, fp: studio.Fingerprint{Easel: app.Version, Model: modelFingerprint}}, nil
}

func encodePNG(img image.Image) []byte {
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

// Run sends the request's images to the studio and waits for them.
func (g *studioGenerator) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (res *pipeline.Result, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	send := func(ev pipeline.Event) {
		if events != nil {
			events <- ev
		}
	}
	defer func() {
		if events != nil {
			close(events)
		}
	}()
	if slot := g.spreadSlot(req); slot != nil { // sent out with its request's other images (studio_spread.go)
		return g.collect(ctx, slot, req, send)
	}
	sr, inputs, err := g.studioRequestOf(ctx, req)
	if err != nil {
		return nil, err
	}
	n := req.Batch()
	batch := studio.NewBatchID()
	jobs := make([]*studio.Job, n)
	for i := range n {
		one := sr
		one.Seed, one.VariationSeed = req.ImageSeeds(i)
		data, _ := json.Marshal(studioRequest{Pipeline: &one, Index: i, Count: n})
		jobs[i] = &studio.Job{Batch: batch, Index: i, Images: n, Fingerprint: g.fp, Request: data, Inputs: inputs, Previews: req.Preview != nil}
	}
	results := make([]*pipeline.Result, n)
	var bad error
	err = g.conn.Run(ctx, jobs, func(e studio.Event) {
		if ev, ok := studioPipelineEvent(e, req, e.Index, n); ok {
			send(ev)
		}
		switch e.Kind {
		case studio.EventResult:
			r, err := studioResultOf(e, req, e.Index)
			if err != nil && bad == nil {
				bad = err
			}
			if r != nil {
				results[e.Index] = r
			}
		}
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, err
	}
	send(pipeline.Event{Stage: pipeline.StageDone})
	first := results[0]
	if n > 1 {
		first.Batch = results
	}
	return first, nil
}

// studioRequestOf is req as a studio job carries it (its images stored in the hub's inputs
// bucket, named in inputs), without the per-image seeds.
func (g *studioGenerator) studioRequestOf(ctx context.Context, req pipeline.Request) (sr studioPipelineRequest, inputs []string, err error) {
	if len(req.LoRAs) > 0 {
		return sr, inputs, errors.New("LoRAs bound in this process cannot go to the studio: pass them as files")
	}
	sr = studioPipelineRequest{Prompt: req.Prompt, Negative: req.NegativePrompt, Width: req.Width, Height: req.Height,
		Aspect: req.Aspect, Resolution: req.Resolution, Steps: req.Steps, CFG: req.CFG, VariationStrength: req.VariationStrength,
		Sigmas: req.Sigmas, Scheduler: req.Scheduler}
	put := func(data []byte) (string, error) {
		name, err := g.conn.PutInput(ctx, data)
		inputs = append(inputs, name)
		return name, err
	}
	for _, im := range req.Images {
		name, err := put(encodePNG(im))
		if err != nil {
			return sr, inputs, err
		}
		sr.Images = append(sr.Images, name)
	}
	if req.Init != nil {
		if sr.InitImage, err = put(encodePNG(req.Init.Image)); err != nil {
			return sr, inputs, err
		}
		sr.InitStrength = req.Init.Strength
		if req.Init.Mask != nil {
			if sr.InitMask, err = put(encodePNG(req.Init.Mask)); err != nil {
				return sr, inputs, err
			}
		}
	}
	if req.Noise != nil {
		buf := make([]byte, 4*len(req.Noise))
		for i, v := range req.Noise {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
		}
		if sr.Noise, err = put(buf); err != nil {
			return sr, inputs, err
		}
	}
	for _, lf := range req.LoRAFiles {
		data, err := os.ReadFile(lf.Path)
		if err != nil {
			return sr, inputs, fmt.Errorf("LoRA %s: %w", lf.Path, err)
		}
		name, err := put(data)
		if err != nil {
			return sr, inputs, err
		}
		sr.LoRAFiles = append(sr.LoRAFiles, studioLoRARef{Input: name, Name: filepath.Base(lf.Path), Strength: lf.Strength})
	}
	return sr, inputs, nil
}

// studioResultOf is a worker's image e as image i of req.
func studioResultOf(e studio.Event, req pipeline.Request, i int) (*pipeline.Result, error) {
	r, err := resultFromPNG(e.PNG)
	if err != nil {
		return nil, fmt.Errorf("image %d from %s: %w", e.Index+1, e.Worker, err)
	}
	_, v := req.ImageSeeds(i)
	r.Index, r.VariationStrength = i, req.VariationStrength
	if req.VariationStrength > 0 {
		r.VariationSeed = v
	}
	if req.Init != nil {
		r.Strength = req.Init.Strength
	}
	return r, nil
}

// resultFromPNG reads a worker's image and the numbers its PNG records.
func resultFromPNG(data []byte) (*pipeline.Result, error) {
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	md, err := imagefile.Read(bytes.NewReader(data), "result")
	if err != nil || md.Settings == nil {
		return nil, fmt.Errorf("the image carries no settings")
	}
	s := md.Settings
	r := &pipeline.Result{Image: studioNRGBA(img), Width: s.Width, Height: s.Height, Steps: s.Steps, CFG: s.CFG, Seed: s.Seed,
		Sigmas: s.Sigmas, Resolution: s.Resolution, StepsRun: max(len(s.Sigmas)-1, 0)}
	return r, nil
}

// studioNRGBA is a decoded PNG as non-premultiplied RGBA, exactly (a PNG of an NRGBA decodes to
// NRGBA, or to RGBA when every pixel is opaque, where the two agree).
func studioNRGBA(img image.Image) *image.NRGBA {
	switch im := img.(type) {
	case *image.NRGBA:
		return im
	case *image.RGBA:
		return &image.NRGBA{Pix: im.Pix, Stride: im.Stride, Rect: im.Rect}
	}
	b := img.Bounds()
	out := image.NewNRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			out.Set(x, y, color.NRGBAModel.Convert(img.At(x, y)))
		}
	}
	return out
}

// renderPipeline renders a studioPipelineRequest (the worker's side of serve --studio).
func (r *studioRenderer) renderPipeline(ctx context.Context, sr *studioPipelineRequest, previews bool, inputs studio.Inputs, dir string, progress func(studio.Step)) ([]byte, error) {
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
		req.Images = append(req.Images, studioNRGBA(im))
	}
	if sr.InitImage != "" {
		im, err := get(sr.InitImage)
		if err != nil {
			return nil, err
		}
		req.Init = &pipeline.InitImage{Image: studioNRGBA(im), Strength: sr.InitStrength}
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
					st.Preview = encodePNG(ev.Preview.Image)
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
