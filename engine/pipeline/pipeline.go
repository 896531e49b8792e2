package pipeline

import (
	"errors"
	"fmt"
	"sync"

	"easel/engine/cmf"
	"easel/engine/condimage"
	"easel/engine/lora"
	"easel/engine/ml"
	"easel/engine/qi21"
	"easel/engine/quant"
	"easel/engine/qwen3vl"
	"easel/engine/sched"
	"easel/engine/tokenizer"
	"easel/engine/vae"
)

// ModelFile is what a Pipeline is built from: the weights (a quant.Source), the JSON config
// blobs and the tokenizer of one Qwen-Image-2.1 model file. *cmf.File is one.
type ModelFile interface {
	quant.Source
	// ConfigJSON returns a config blob by tensor name ("qi21.config_json", …).
	ConfigJSON(name string) ([]byte, error)
	// Vocab is the tokenizer.json bytes, or nil when the file has none.
	Vocab() []byte
}

// Options adjust a Pipeline beyond what the model file says.
type Options struct {
	// ImageProcessor replaces the image-processor settings for condition images. nil means the
	// model file's own (condimage.ImageProcessorTensor, written by easel convert from the snapshot's
	// processor_config.json), or condimage.DefaultImageProcessorConfig() for files without it
	// (cortiq's).
	ImageProcessor *condimage.ImageProcessorConfig
	// Tiling forces how the VAE decodes. The zero value chooses per image: one piece (exact) when
	// its planned activations fit a quarter of the device budget, else the largest tiling that does.
	Tiling vae.Tiling
	// Denoiser, VAE and TextEncoder place the networks (package pipelinemetal puts them on a
	// Metal device); nil runs a network on the pipeline's backend.
	Denoiser    Place[Denoiser, *qi21.Model]
	VAE         Place[VAE, *vae.Model]
	TextEncoder Place[TextEncoder, *qwen3vl.Encoder]
}

// Pipeline is one model bound to one backend, ready to run requests one at a time.
type Pipeline struct {
	model   ModelFile
	be      ml.Backend   // the cancellable wrapper every network is bound to
	guard   *cancellable // its context switch
	inner   ml.Backend
	tok     *tokenizer.Tokenizer
	enc     *qwen3vl.Encoder
	dit     *qi21.Model
	den     Denoiser // runs dit's prefill/step/release
	vae     *vae.Model
	vaeNet  VAE         // runs decodes and encodes (the device, or vae itself)
	textNet TextEncoder // encodes prompts (the device, or enc itself)
	// Where the networks run, and the declines of their calls since Run last reported them.
	denAt, vaeAt, textAt *placed
	sched                sched.Config
	defaults             Defaults
	proc                 condimage.ImageProcessorConfig
	tiling               *vae.Tiling // forced by Options; nil chooses per image
	padID                int32
	vision               bool
	weights              []ComponentBytes
	// residency prefetches and releases networks' weights in the file mapping (nil: the model
	// file cannot).
	residency residency
	loras     loraCache // LoRA files loaded for requests (loras.go)

	// The sharp preview's VAE, bound on first use (sharpModel).
	sharpOnce  sync.Once
	sharpVAE   *vae.Model
	sharpGuard *cancellable
	sharpErr   error

	mu sync.Mutex // one Run at a time
}

// LoRALayers are the denoiser's linear layers, which LoRA files are bound to (lora.Open).
func (p *Pipeline) LoRALayers() []lora.Layer { return qi21.LinearLayers(p.dit.Config) }

// New binds the text encoder, the denoiser and the VAE of m to be, reads the tokenizer from the
// vocab section and the defaults and scheduler from the config blobs. The weights stay where m
// keeps them (the file mapping); m must stay open while the Pipeline is used.
func New(m ModelFile, be ml.Backend, opts Options) (*Pipeline, error) {
	if m == nil || be == nil {
		return nil, errors.New("pipeline: New needs an open model file and a backend")
	}
	p := &Pipeline{model: m, inner: be, proc: condimage.DefaultImageProcessorConfig()}
	p.be, p.guard = wrapBackend(be)
	if opts.ImageProcessor != nil {
		p.proc = *opts.ImageProcessor
	} else if js, err := m.ConfigJSON(condimage.ImageProcessorTensor); err == nil {
		// Files converted by Easel carry the snapshot's processor settings; cortiq's do not, and
		// the stock settings apply.
		if p.proc, err = condimage.ParseImageProcessorConfig(js, condimage.ImageProcessorTensor); err != nil {
			return nil, fmt.Errorf("pipeline: %w", err)
		}
	}
	if opts.Tiling != (vae.Tiling{}) {
		p.tiling = &opts.Tiling
	}
	vocab := m.Vocab()
	if len(vocab) == 0 {
		return nil, errors.New("pipeline: the model file has no tokenizer (its vocab section is empty): convert the snapshot again with easel convert")
	}
	var err error
	if p.tok, err = tokenizer.Load(vocab); err != nil {
		return nil, fmt.Errorf("pipeline: the model file's tokenizer: %w", err)
	}
	pad, ok := p.tok.TokenID("<|image_pad|>")
	if !ok {
		return nil, errors.New("pipeline: the model file's tokenizer has no <|image_pad|> token: it is not Qwen3-VL's")
	}
	p.padID = int32(pad)
	js, err := m.ConfigJSON(DefaultsTensor)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if p.defaults, err = parseDefaults(js); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if js, err = m.ConfigJSON(SchedulerTensor); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if p.sched, err = sched.ParseConfig(js); err != nil {
		return nil, fmt.Errorf("pipeline: %s: %w", SchedulerTensor, err)
	}
	if p.enc, err = qwen3vl.NewEncoder(p.be, m); err != nil {
		return nil, fmt.Errorf("pipeline: text encoder: %w", err)
	}
	_, p.vision = p.enc.VisionConfig()
	if p.dit, err = qi21.Load(m, p.be); err != nil {
		return nil, fmt.Errorf("pipeline: denoiser: %w", err)
	}
	if p.vae, err = vae.Load(p.be, m); err != nil {
		return nil, fmt.Errorf("pipeline: VAE: %w", err)
	}
	if got, want := p.enc.TextConfig().Hidden, p.dit.Config.ContextDim; got != want {
		return nil, fmt.Errorf("pipeline: the text encoder is %d wide but the denoiser reads %d-wide prompts: the file mixes two models", got, want)
	}
	if z := p.vae.Config().ZDim; z != p.dit.Config.InChannels || z != p.dit.Config.OutChannels {
		return nil, fmt.Errorf("pipeline: the VAE has %d latent channels but the denoiser takes %d and makes %d: the file mixes two models", z, p.dit.Config.InChannels, p.dit.Config.OutChannels)
	}
	p.denAt = &placed{network: "the denoiser", call: "a prompt"}
	p.vaeAt = &placed{network: "the VAE", call: "the VAE"}
	p.textAt = &placed{network: "the text encoder", call: "the text encoder"}
	if p.vaeNet, err = place(p, p.vaeAt, opts.VAE, p.vae, VAE(p.vae)); err != nil {
		return nil, err
	}
	if p.textNet, err = place(p, p.textAt, opts.TextEncoder, p.enc, TextEncoder(p.enc)); err != nil {
		return nil, err
	}
	if p.den, err = place(p, p.denAt, opts.Denoiser, p.dit, CPUDenoiser(p.dit)); err != nil {
		return nil, err
	}
	p.residency, _ = m.(residency)
	if e, ok := m.(interface{ Entries() []cmf.Entry }); ok {
		p.weights = weightsByComponent(e.Entries())
	}
	return p, nil
}

// TextEncoderNotice is a sentence about where the text encoder runs, or "" when it runs on the
// pipeline's backend as usual. Run reports it too.
func (p *Pipeline) TextEncoderNotice() string { return p.textAt.Notice }

// VAENotice is a sentence about where the VAE runs (the device, or why a device declined it), or
// "" when it runs on the pipeline's backend as usual. Run reports it too.
func (p *Pipeline) VAENotice() string { return p.vaeAt.Notice }

// Defaults are the model's generation defaults (qi21.config_json).
func (p *Pipeline) Defaults() Defaults { return p.defaults }

// HasVision reports whether the model file carries the vision tower that condition images need.
func (p *Pipeline) HasVision() bool { return p.vision }

// Backend is the backend the pipeline was built with.
func (p *Pipeline) Backend() ml.Backend { return p.inner }

// DenoiserNotice is a sentence about where the denoiser runs (the device, or why a device
// declined it), or "" when it runs on the pipeline's backend as usual. Run reports it too.
func (p *Pipeline) DenoiserNotice() string { return p.denAt.Notice }

// DenoiserDevice names the device the denoiser runs on ("" when it runs on the pipeline's
// backend, including after a device declined the model).
func (p *Pipeline) DenoiserDevice() string { return p.denAt.Device }

// Close releases what the networks hold on a device. The model file may be closed after it.
func (p *Pipeline) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range []*placed{p.denAt, p.vaeAt, p.textAt} {
		n.close()
	}
}
