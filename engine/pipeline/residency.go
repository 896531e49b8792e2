package pipeline

import "runtime/debug"

// Staged residency: only the network that is running keeps its weights resident. A model file
// that can (cmf.File) is told to read the denoiser's weights ahead while the text encoder runs,
// to drop the text encoder's and the vision tower's pages once the prompts are encoded, and the
// denoiser's once the last step is done (unless a device reads them in place), so the peak is the
// largest network plus what crosses stages (prefix K/V, latents), never the sum of the networks.

// residency is a ModelFile whose mapped weights can be prefetched and released by name prefix.
type residency interface {
	Prefetch(prefixes ...string)
	Release(prefixes ...string)
}

// Weight prefixes of the networks in a model file.
const (
	textEncoderWeights = "te."
	visionWeights      = "vis."
	denoiserWeights    = "dit."
	vaeWeights         = "vae."
)

func (p *Pipeline) prefetch(prefixes ...string) {
	if p.residency != nil {
		p.residency.Prefetch(prefixes...)
	}
}

// release drops the networks' pages and returns the Go heap the finished stage freed (its
// activations) to the system, so the next stage starts from what it needs.
func (p *Pipeline) release(prefixes ...string) {
	if p.residency != nil {
		p.residency.Release(prefixes...)
	}
	debug.FreeOSMemory()
}

// releaseDenoiser drops the denoiser's pages after the last step, unless a device maps them
// (the Metal denoiser wraps the mapping in a buffer the GPU reads).
func (p *Pipeline) releaseDenoiser() {
	if p.DenoiserDevice() != "" {
		debug.FreeOSMemory()
		return
	}
	p.release(denoiserWeights)
}
