package pipeline

import (
	"context"
	"fmt"
	"sync"
	"time"

	"easel/engine/ml"
	"easel/engine/qwen3vl"
	"easel/engine/vae"
)

// The pipeline's three networks, as it calls them wherever they run. The models loaded on the
// pipeline's backend are the defaults; Options place them elsewhere (package pipelinemetal puts
// them on a Metal device, falling back to these models when the device declines).
type (
	// TextEncoder encodes one prompt's token ids, with its condition images' pixel rows, into the
	// prompt's hidden rows (qwen3vl.Encoder.Encode).
	TextEncoder interface {
		Encode(ctx context.Context, ids []int32, images []qwen3vl.VisionInput) ([]float32, error)
	}
	// VAE decodes latents and encodes images, each in one piece when tiling is nil (the tiling is
	// on the latent grid either way: vae.Model.DecodeTiled, EncodeTiled). *vae.Model is one, on
	// the pipeline's backend.
	VAE interface {
		DecodeWith(ctx context.Context, zn *vae.Latents, tiling *vae.Tiling) (*vae.Image, error)
		EncodeWith(ctx context.Context, img *vae.Image, tiling *vae.Tiling) (mode, normalized *vae.Latents, err error)
	}
)

// Placement is what the pipeline knows of where one network runs, whichever device that is: what
// to tell the user, the device, its time, its per-class timings, the device memory it holds
// between calls and how to release it. The zero value is a network on the pipeline's backend.
type Placement struct {
	// Notice is a sentence about where the network runs (on a device, or why a device declined
	// the model); "" when it runs on the pipeline's backend as usual. Run reports it.
	Notice string
	// Device names the device the network runs on; "" on the pipeline's backend (also after a
	// device declined the model).
	Device string
	// Budget is the memory the network may use where it runs (a device's recommended working
	// set); 0 for the backend's.
	Budget int64
	// DeviceTime is the device time so far (nil: none).
	DeviceTime func() time.Duration
	// Timings are the device's per-class op times, added to the backend's (nil: none).
	Timings func() *ml.Timings
	// GPUClasses is the device's GPU time per op class so far, kept in every mode, and how it was
	// measured (nil: none).
	GPUClasses func() ml.GPUClasses
	// Resident is the device memory the network holds between its calls, which the other
	// networks' device plans count (nil: none).
	Resident func() int64
	// Close releases what the network holds on its device (nil: nothing). Pipeline.Close calls it.
	Close func()
}

// Site is what the pipeline gives a network's placement: the model file, where to report a
// device's decline of one call (which then runs on the pipeline's backend) and a device's
// recovery during a call (recovery.go: the pipeline fills in Network and the notice), and the
// device memory the pipeline's other networks hold now.
type Site struct {
	Model     ModelFile
	Declined  func(Decline)
	Recovered func(Recovery)
	Others    func() int64
}

// Place puts one network somewhere: given the site and the network loaded on the pipeline's
// backend (cpu), it returns the network to call and where it runs. nil keeps cpu.
type Place[N, C any] func(s Site, cpu C) (N, Placement, error)

// Decline is a device's refusal of one piece of work (a model, a prompt, a decode), which then
// runs on the pipeline's backend: the device as the user knows it ("Metal") and why, a sentence.
type Decline struct {
	Device string
	Reason string
}

// Notice is the sentence for the user: what the device declined, why, and that the CPU runs it.
func (d Decline) Notice(what string) string {
	return d.Device + " declined " + what + ": " + d.Reason + "; the CPU runs it instead"
}

// placed is the pipeline's side of one network's placement: where it runs and the declines of
// the calls since Run last reported them.
type placed struct {
	Placement
	network string // "the denoiser", "the VAE", "the text encoder"
	call    string // what a declined call is, in a notice: "a prompt", "the VAE"

	mu      sync.Mutex
	pending []string
	// the run's recoveries, one per kind (recovery.go), and those not told yet (indices)
	runRecoveries     []Recovery
	pendingRecoveries []int
}

// declined is the network's Site.Declined.
func (n *placed) declined(d Decline) {
	n.mu.Lock()
	n.pending = append(n.pending, d.Notice(n.call))
	n.mu.Unlock()
}

// takeNotices returns and clears the declines so far.
func (n *placed) takeNotices() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.pending
	n.pending = nil
	return out
}

func (n *placed) deviceTime() time.Duration {
	if n.DeviceTime == nil {
		return 0
	}
	return n.DeviceTime()
}

func (n *placed) gpuClasses() ml.GPUClasses {
	if n.GPUClasses == nil {
		return ml.GPUClasses{}
	}
	return n.GPUClasses()
}

func (n *placed) resident() int64 {
	if n.Resident == nil {
		return 0
	}
	return n.Resident()
}

func (n *placed) close() {
	if n.Close != nil {
		n.Close()
	}
}

// place puts one network where f says (nil: cpu itself, on the pipeline's backend) and records
// its placement in at.
func place[N, C any](p *Pipeline, at *placed, f Place[N, C], cpu C, def N) (N, error) {
	if f == nil {
		return def, nil
	}
	n, pl, err := f(Site{Model: p.model, Declined: at.declined, Recovered: at.recovered, Others: func() int64 { return p.residentBesides(at) }}, cpu)
	if err != nil {
		return n, fmt.Errorf("pipeline: %s: %w", at.network, err)
	}
	if any(n) == nil {
		return n, fmt.Errorf("pipeline: the placement of %s gave no network", at.network)
	}
	at.Placement = pl
	return n, nil
}

// placements are the three networks' placements, in the order Pipeline.New places them.
func (p *Pipeline) placements() []*placed { return []*placed{p.vaeAt, p.textAt, p.denAt} }

// residentBesides is the device memory the networks other than at hold now.
func (p *Pipeline) residentBesides(at *placed) int64 {
	var n int64
	for _, o := range p.placements() {
		if o != at && o != nil {
			n += o.resident()
		}
	}
	return n
}
