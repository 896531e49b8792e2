package studiogen

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

// PipelineRequest is a pipeline.Request as a studio job carries it (`easel serve --studio`:
// the A1111 API builds requests, not command lines): images as PNGs in the hub's inputs bucket.
type PipelineRequest struct {
	Prompt            string        `json:"prompt"`
	Negative          string        `json:"negative,omitempty"`
	Images            []string      `json:"images,omitempty"`
	InitImage         string        `json:"init_image,omitempty"`
	InitStrength      float64       `json:"init_strength,omitempty"`
	InitMask          string        `json:"init_mask,omitempty"`
	Width             int           `json:"width,omitempty"`
	Height            int           `json:"height,omitempty"`
	Aspect            float64       `json:"aspect,omitempty"`
	Resolution        int           `json:"resolution,omitempty"`
	Steps             int           `json:"steps,omitempty"`
	CFG               float64       `json:"cfg,omitempty"`
	Seed              uint64        `json:"seed"`
	VariationSeed     uint64        `json:"variation_seed,omitempty"`
	VariationStrength float64       `json:"variation_strength,omitempty"`
	Sigmas            []float64     `json:"sigmas,omitempty"`
	Scheduler         *sched.Config `json:"scheduler,omitempty"`
	LoRAFiles         []LoRARef     `json:"lora_files,omitempty"`
	// Noise is the starting noise itself (A1111's variation seeds are mixed into it by serve),
	// float32 little-endian in the inputs bucket.
	Noise string `json:"noise,omitempty"`
}

type LoRARef struct {
	Input, Name string
	Strength    float64
}

// Generator is a jobs.Generator that renders on the studio: each image of a request is a
// job of its own (its own seed and variation seed), the batch's images come back in order.
type Generator struct {
	conn *studio.Conn
	fp   studio.Fingerprint
	mu   sync.Mutex // one request at a time (the queue runs one job at a time anyway)

	smu    sync.Mutex                       // guards spread
	spread map[<-chan struct{}]*spreadImage // the images of spread requests, by Stop (studio_spread.go)
}

// New connects `easel serve --studio` to the hub as a client, for the model file
// with this fingerprint.
func New(url, token, pin, modelFingerprint string, say func(string)) (*Generator, error) {
	c, err := studio.Dial(context.Background(), url, studio.DialOptions{Role: studio.RoleClient, Token: token, Pin: pin, OnEvent: say})
	if err != nil {
		return nil, err
	}
	return &Generator{conn: c, fp: studio.Fingerprint{Easel: app.Version, Model: modelFingerprint, Kind: studio.KindPipeline}}, nil
}

func EncodePNG(img image.Image) []byte {
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

// Run sends the request's images to the studio and waits for them.
func (g *Generator) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (res *pipeline.Result, err error) {
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
	sr, inputs, err := g.requestOf(ctx, req)
	if err != nil {
		return nil, err
	}
	n := req.Batch()
	batch := studio.NewBatchID()
	jobs := make([]*studio.Job, n)
	for i := range n {
		one := sr
		one.Seed, one.VariationSeed = req.ImageSeeds(i)
		data, _ := json.Marshal(envelope{Pipeline: &one, Index: i, Count: n})
		jobs[i] = &studio.Job{Batch: batch, Index: i, Images: n, Fingerprint: g.fp, Request: data, Inputs: inputs, Previews: req.Preview != nil}
	}
	results := make([]*pipeline.Result, n)
	var bad error
	places := newPlacements(ctx, n)
	err = g.conn.Run(ctx, jobs, func(e studio.Event) {
		places.note(e, e.Index)
		if ev, ok := studioPipelineEvent(e, req, e.Index, n); ok {
			send(ev)
		}
		switch e.Kind {
		case studio.EventResult:
			r, err := resultOf(e, req, e.Index)
			if err != nil && bad == nil {
				bad = err
			}
			if r != nil {
				results[e.Index] = r
				if n > 1 { // as a local batch tells each decoded image (the window's sheet shows and saves it)
					seed, v := req.ImageSeeds(e.Index)
					send(pipeline.Event{Stage: pipeline.StageDecoding, Image: e.Index, Images: n, Seed: seed, VariationSeed: v, Finished: r})
				}
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

// requestOf is req as a studio job carries it (its images stored in the hub's inputs
// bucket, named in inputs), without the per-image seeds.
func (g *Generator) requestOf(ctx context.Context, req pipeline.Request) (sr PipelineRequest, inputs []string, err error) {
	if len(req.LoRAs) > 0 {
		return sr, inputs, errors.New("LoRAs bound in this process cannot go to the studio: pass them as files")
	}
	sr = PipelineRequest{Prompt: req.Prompt, Negative: req.NegativePrompt, Width: req.Width, Height: req.Height,
		Aspect: req.Aspect, Resolution: req.Resolution, Steps: req.Steps, CFG: req.CFG, VariationStrength: req.VariationStrength,
		Sigmas: req.Sigmas, Scheduler: req.Scheduler}
	put := func(data []byte) (string, error) {
		name, err := g.conn.PutInput(ctx, data)
		inputs = append(inputs, name)
		return name, err
	}
	for _, im := range req.Images {
		name, err := put(EncodePNG(im))
		if err != nil {
			return sr, inputs, err
		}
		sr.Images = append(sr.Images, name)
	}
	if req.Init != nil {
		if sr.InitImage, err = put(EncodePNG(req.Init.Image)); err != nil {
			return sr, inputs, err
		}
		sr.InitStrength = req.Init.Strength
		if req.Init.Mask != nil {
			if sr.InitMask, err = put(EncodePNG(req.Init.Mask)); err != nil {
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
		sr.LoRAFiles = append(sr.LoRAFiles, LoRARef{Input: name, Name: filepath.Base(lf.Path), Strength: lf.Strength})
	}
	return sr, inputs, nil
}

// resultOf is a worker's image e as image i of req.
func resultOf(e studio.Event, req pipeline.Request, i int) (*pipeline.Result, error) {
	r, err := ResultFromPNG(e.PNG)
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

// ResultFromPNG reads a worker's image and the numbers its PNG records.
func ResultFromPNG(data []byte) (*pipeline.Result, error) {
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	md, err := imagefile.Read(bytes.NewReader(data), "result")
	if err != nil || md.Settings == nil {
		return nil, fmt.Errorf("the image carries no settings")
	}
	s := md.Settings
	r := &pipeline.Result{Image: NRGBA(img), Width: s.Width, Height: s.Height, Steps: s.Steps, CFG: s.CFG, Seed: s.Seed,
		Sigmas: s.Sigmas, Resolution: s.Resolution, StepsRun: max(len(s.Sigmas)-1, 0)}
	return r, nil
}

// NRGBA is a decoded PNG as non-premultiplied RGBA, exactly (a PNG of an NRGBA decodes to
// NRGBA, or to RGBA when every pixel is opaque, where the two agree).
func NRGBA(img image.Image) *image.NRGBA {
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

// envelope is the job's request as workers read it (app/cli's studioRequest, its pipeline form).
type envelope struct {
	Pipeline *PipelineRequest `json:"pipeline"`
	Index    int              `json:"index"`
	Count    int              `json:"count"`
}

// Conn is the generator's connection to the hub.
func (g *Generator) Conn() *studio.Conn { return g.conn }

// Close disconnects from the hub.
func (g *Generator) Close() { g.conn.Close() }

// EventText is a studio event about an image in words: which Mac renders it, at which attempt.
func EventText(e studio.Event) string {
	switch e.Kind {
	case studio.EventTaken:
		if e.Attempt > 1 {
			return fmt.Sprintf("restarted on %s (attempt %d)", e.Worker, e.Attempt)
		}
		return "rendering on " + e.Worker
	case studio.EventHandedBack:
		return e.Worker + " left; the image goes back to the queue"
	case studio.EventDuplicate:
		return fmt.Sprintf("a late copy from %s (attempt %d) was dropped: the image was already written", e.Worker, e.Attempt)
	}
	return e.Kind + ": " + e.Detail
}
