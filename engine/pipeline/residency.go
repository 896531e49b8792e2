package pipeline

import "runtime/debug"

// Staged residency: only the network that is running keeps its weights resident. A model file
// that can (cmf.File) is told to read the denoiser's weights ahead while the text encoder runs,
// to drop the text encoder's and the vision tower's pages once the prompts are encoded, and the
// denoiser's once the last step is done (a device that read them in place, the Metal denoiser,
// has released its buffers over them by then), so the peak is the largest network plus what
// crosses stages (prefix K/V, latents), never the sum of the networks.

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

// releaseDeviceWeights drops the denoiser's buffers over the mapping, if it has any (the Metal
// denoiser's no-copy buffers, held only while it runs); Denoise calls it once its programs are
// released, on every path.
func (p *Pipeline) releaseDeviceWeights() bool { return p.den.ReleaseWeights() }

// releaseDenoiser drops the denoiser's device buffers over the mapping and then its pages after
// the last step. A device still reading them (a program live elsewhere) keeps the pages.
func (p *Pipeline) releaseDenoiser() {
	if !p.releaseDeviceWeights() {
		debug.FreeOSMemory()
		return
	}
	p.release(denoiserWeights)
}
