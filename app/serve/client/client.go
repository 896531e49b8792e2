// Package client renders on another machine's `easel serve` (or any AUTOMATIC1111 API) behind
// the app's job interface: Generator is a jobs.Generator, so the window queues a remote job as it
// queues a local one, and gets its progress and live preview as events and its image with the
// settings the server's PNG carries.
package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"easel/app/imagefile"
	"easel/engine/imageio"
	"easel/engine/pipeline"
)

// ErrServerGone wraps every failure to reach the server or to get its answer: the job did not
// finish there, and the draft is still the artist's to run again.
var ErrServerGone = errors.New("the render server could not be reached")

// Generator runs jobs on a server. Addr is host:port (http) or a full URL; User/Pass or Token are
// the server's credentials, if it asks for them.
type Generator struct {
	Addr       string
	User, Pass string
	Token      string
	// Poll is how often progress is asked for (250 ms when 0).
	Poll time.Duration
	// HTTP is the client to use (a default one when nil).
	HTTP *http.Client
}

func (g *Generator) base() string {
	a := strings.TrimRight(g.Addr, "/")
	if !strings.Contains(a, "://") {
		a = "http://" + a
	}
	return a
}

func (g *Generator) client() *http.Client {
	if g.HTTP != nil {
		return g.HTTP
	}
	return http.DefaultClient
}

// do sends one request with the credentials.
func (g *Generator) do(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		js, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(js)
	}
	req, err := http.NewRequestWithContext(ctx, method, g.base()+path, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if g.User != "" {
		req.SetBasicAuth(g.User, g.Pass)
	} else if g.Token != "" {
		req.Header.Set("Authorization", "Bearer "+g.Token)
	}
	return g.client().Do(req)
}

// gone is the error for a server that did not answer.
func (g *Generator) gone(err error) error {
	return fmt.Errorf("%w: %s stopped answering during the job (%v); the draft is kept: render here (Settings → Render on: this machine) or try again when it is back", ErrServerGone, g.Addr, err)
}

// body is the A1111 request for req.
func body(req pipeline.Request) (map[string]any, string, error) {
	if req.Noise != nil {
		return nil, "", errors.New("a job with its own starting noise cannot be sent to another machine: render it on this Mac")
	}
	prompt := req.Prompt
	for _, l := range req.LoRAFiles {
		name := strings.TrimSuffix(filepath.Base(l.Path), filepath.Ext(l.Path))
		prompt += fmt.Sprintf(" <lora:%s:%s>", name, strconv.FormatFloat(l.Strength, 'g', -1, 64))
	}
	// easel_alpha: an Easel server answers the model's alpha as a local run keeps it (A1111's
	// answers are RGB; other servers ignore the field).
	b := map[string]any{"prompt": prompt, "negative_prompt": req.NegativePrompt, "seed": req.Seed, "sampler_name": "Euler", "easel_alpha": true}
	if req.Width > 0 && req.Height > 0 {
		b["width"], b["height"] = req.Width, req.Height
	}
	if req.Steps > 0 {
		b["steps"] = req.Steps
	}
	// A LoRA preset's schedule travels in Easel's own fields (other A1111 servers ignore unknown
	// keys; finish says when the answer shows the grid was not used); steps stays the grid's
	// length for them.
	if len(req.Sigmas) > 0 {
		b["steps"], b["easel_sigmas"] = len(req.Sigmas), req.Sigmas
	}
	if req.Scheduler != nil {
		b["easel_scheduler"] = req.Scheduler
	}
	// A batch as A1111 sends one: batch_size images of seeds seed+i, or with a variation the same
	// seed and subseeds subseed+i.
	if n := req.Batch(); n > 1 {
		b["batch_size"] = n
	}
	if req.VariationStrength > 0 {
		b["subseed"], b["subseed_strength"] = req.VariationSeed, req.VariationStrength
	}
	if req.CFG > 0 {
		b["cfg_scale"] = req.CFG
	}
	var extra []string
	for _, img := range req.Images {
		s, err := pngBase64(img)
		if err != nil {
			return nil, "", err
		}
		extra = append(extra, s)
	}
	if len(extra) > 0 {
		b["extra_images"] = extra
	}
	route := "/sdapi/v1/txt2img"
	if in := req.Init; in != nil && in.Image != nil {
		route = "/sdapi/v1/img2img"
		s, err := pngBase64(in.Image)
		if err != nil {
			return nil, "", err
		}
		b["init_images"] = []string{s}
		b["denoising_strength"] = in.Strength
		b["width"], b["height"] = in.Image.Rect.Dx(), in.Image.Rect.Dy()
		if in.Mask != nil {
			m, err := pngBase64(in.Mask)
			if err != nil {
				return nil, "", err
			}
			b["mask"], b["mask_blur"], b["inpaint_full_res"] = m, 0, false // prepared here already
			// The window pastes the result back through its own mask (as after a local run):
			// the server must not paste it too, or the feather and the seam differ.
			b["easel_paste_back"] = false
		}
	}
	return b, route, nil
}

func pngBase64(img image.Image) (string, error) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// answer is A1111's generation response.
type answer struct {
	Images []string `json:"images"`
	Info   string   `json:"info"`
}

// Run sends the job, reports the server's progress and live preview as events while it runs, and
// returns its image with the settings its PNG carries; a batch's result holds every image in
// Batch, each also sent as a Finished event, as a local batch does. Cancelling ctx interrupts it
// there.
func (g *Generator) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	if events != nil {
		defer close(events)
	}
	send := func(ev pipeline.Event) {
		if events != nil {
			select {
			case events <- ev:
			case <-ctx.Done():
			}
		}
	}
	b, route, err := body(req)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	send(pipeline.Event{Stage: pipeline.StageEncodingPrompt, Notice: "rendering on " + g.Addr})
	type result struct {
		resp *http.Response
		err  error
	}
	reqCtx, stopReq := context.WithCancel(context.Background())
	defer stopReq()
	answered := make(chan result, 1)
	go func() {
		resp, err := g.do(reqCtx, "POST", route, b)
		answered <- result{resp, err}
	}()
	poll := g.Poll
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	type at struct{ image, step int }
	last := at{-1, -1}
	for {
		select {
		case r := <-answered:
			if r.err != nil {
				return nil, g.gone(r.err)
			}
			return g.finish(r.resp, req, start, send)
		case <-ctx.Done():
			ictx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if resp, err := g.do(ictx, "POST", "/sdapi/v1/interrupt", nil); err == nil {
				resp.Body.Close()
			}
			cancel()
			stopReq()
			return nil, fmt.Errorf("the job on %s was cancelled: %w", g.Addr, ctx.Err())
		case <-tick.C:
			ev, ok := g.progress(ctx, req, start)
			if now := (at{ev.Image, ev.Step}); ok && now != last {
				last = now
				send(ev)
			}
		}
	}
}

// progress asks the server how the job goes, as an event (ok false when it could not say).
func (g *Generator) progress(ctx context.Context, req pipeline.Request, start time.Time) (pipeline.Event, bool) {
	resp, err := g.do(ctx, "GET", "/sdapi/v1/progress", nil)
	if err != nil {
		return pipeline.Event{}, false
	}
	defer resp.Body.Close()
	var p struct {
		ETARelative float64 `json:"eta_relative"`
		State       struct {
			SamplingStep  int `json:"sampling_step"`
			SamplingSteps int `json:"sampling_steps"`
			JobNo         int `json:"job_no"`
			JobCount      int `json:"job_count"`
		} `json:"state"`
		CurrentImage *string `json:"current_image"`
	}
	if resp.StatusCode != 200 || json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&p) != nil || p.State.SamplingSteps == 0 {
		return pipeline.Event{}, false
	}
	ev := pipeline.Event{Stage: pipeline.StageDenoising, Step: p.State.SamplingStep, Steps: p.State.SamplingSteps,
		Elapsed: time.Since(start), ETA: time.Duration(p.ETARelative * float64(time.Second)), Images: 1}
	if n := req.Batch(); n > 1 && p.State.JobCount == n && p.State.JobNo >= 0 && p.State.JobNo < n {
		ev.Image, ev.Images = p.State.JobNo, n // the server runs a batch's images as jobs in order
	}
	ev.Seed, ev.VariationSeed = req.ImageSeeds(ev.Image)
	if p.CurrentImage != nil {
		if data, err := base64.StdEncoding.DecodeString(*p.CurrentImage); err == nil {
			if img, err := imageio.Decode(data, "live preview"); err == nil {
				ev.Preview = &pipeline.Preview{Image: img, H: img.Rect.Dy() / 16, W: img.Rect.Dx() / 16}
			}
		}
	}
	return ev, true
}

// finish reads the answer: every image with its settings, the first as the result and all of
// them in its Batch for a batch (each sent as a Finished event, as the local pipeline does).
func (g *Generator) finish(resp *http.Response, req pipeline.Request, start time.Time, send func(pipeline.Event)) (*pipeline.Result, error) {
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		return nil, g.gone(err)
	}
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("%s refused the job (HTTP %d): %s", g.Addr, resp.StatusCode, strings.TrimSpace(string(data)))
	}
	var a answer
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("%s answered with something that is not an image (%v): is it Easel's or A1111's API?", g.Addr, err)
	}
	if len(a.Images) == 0 {
		return nil, fmt.Errorf("%s answered without an image: the job was stopped there (interrupted, or the server is shutting down); the draft is kept: render here or try again", g.Addr)
	}
	n := req.Batch()
	if len(a.Images) > n {
		a.Images = a.Images[len(a.Images)-n:] // A1111 puts a grid of the batch first
	}
	results := make([]*pipeline.Result, len(a.Images))
	for i, enc := range a.Images {
		if results[i], err = g.image(enc, req, i); err != nil {
			return nil, err
		}
	}
	if len(req.Sigmas) > 0 && !gridUsed(a.Info, req.Sigmas) {
		send(pipeline.Event{Stage: pipeline.StageDecoding, Notice: fmt.Sprintf("%s did not use the LoRA preset's sigma grid (it is not an Easel server, or an older one): the image was made with its own %d-step schedule", g.Addr, len(req.Sigmas))})
	}
	took := time.Since(start)
	for _, res := range results {
		res.StageTimes[pipeline.StageDone] = took
	}
	if n > 1 {
		for i, res := range results {
			send(pipeline.Event{Stage: pipeline.StageDecoding, Step: res.Steps, Steps: res.Steps, Image: i, Images: n,
				Seed: res.Seed, VariationSeed: res.VariationSeed, Finished: res, Elapsed: took})
		}
		results[0].Batch = results
	}
	send(pipeline.Event{Stage: pipeline.StageDone, Step: results[0].Steps, Steps: results[0].Steps, Elapsed: took})
	return results[0], nil
}

// image reads the answer's image i with the settings its PNG carries; its seeds are the
// request's for image i where the PNG does not say (a server that is not Easel's).
func (g *Generator) image(enc string, req pipeline.Request, i int) (*pipeline.Result, error) {
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("%s answered with an image that is not base64: %v", g.Addr, err)
	}
	img, err := imageio.Decode(raw, "the server's image")
	if err != nil {
		return nil, err
	}
	res := &pipeline.Result{Image: img, Width: img.Rect.Dx(), Height: img.Rect.Dy(), Index: i}
	res.Seed, res.VariationSeed = req.ImageSeeds(i)
	if req.VariationStrength > 0 {
		res.VariationStrength = req.VariationStrength
	} else {
		res.VariationSeed = 0
	}
	if m, err := imagefile.Read(bytes.NewReader(raw), "the server's image"); err == nil && m.Settings != nil {
		s := m.Settings
		res.Steps, res.CFG, res.Seed, res.Sigmas, res.Resolution = s.Steps, s.CFG, s.Seed, s.Sigmas, s.Resolution
		if s.VariationStrength > 0 {
			res.VariationSeed, res.VariationStrength = s.VariationSeed, s.VariationStrength
		}
	}
	return res, nil
}

// gridUsed reports whether the answer's info says the fixed sigma grid asked for was used (an
// Easel server echoes easel_sigmas; a server that ignored the field does not).
func gridUsed(info string, asked []float64) bool {
	var i struct {
		Sigmas []float64 `json:"easel_sigmas"`
	}
	return json.Unmarshal([]byte(info), &i) == nil && slices.Equal(i.Sigmas, asked)
}
