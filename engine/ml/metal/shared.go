package metal

import "easel/kernels/device"

// The device plumbing other networks' Metal chains share with the denoiser (engine/vae/vaemetal):
// declines, device limits and the in-place weight arena, exported as they are.

// Decline returns a *Declined error with a sentence a user can read.
func Decline(format string, args ...any) error { return decline(format, args...) }

// FormatBytes formats a byte count as decline sentences do (GB decimal, or KB/MB when small).
func FormatBytes(n int64) string { return gb(n) }

// DeviceLimits returns the device's largest buffer and recommended working set in bytes; a limit
// the device reports as zero or less is taken as none.
func DeviceLimits(dev device.Device) (maxBuffer, workingSet int64) { return limitsOf(dev) }

// InMapping reports whether b is a slice of mapping (a payload a weight arena can wrap in place).
func InMapping(mapping, b []byte) bool {
	_, ok := offsetIn(mapping, b)
	return ok
}

// WeightArenaPlan is the layout of a weight arena before any buffer exists, so its size can be
// checked against the device's limits first.
type WeightArenaPlan struct{ p *arenaPlan }

// PlanWeightArena places tensor payloads (slices of mapping, each 16-byte aligned) in page-aligned
// chunks of at most maxBuffer bytes. names name the tensors in decline sentences.
func PlanWeightArena(mapping []byte, tensors [][]byte, names []string, maxBuffer int64) (*WeightArenaPlan, error) {
	p, err := planArena(mapping, tensors, names, maxBuffer)
	if err != nil {
		return nil, err
	}
	return &WeightArenaPlan{p}, nil
}

// Chunks is the byte length of every chunk, for a memory plan.
func (p *WeightArenaPlan) Chunks() []int64 {
	out := make([]int64, len(p.p.chunks))
	for i, c := range p.p.chunks {
		out[i] = c.len
	}
	return out
}

// Build wraps the chunks as no-copy buffers of dev.
func (p *WeightArenaPlan) Build(dev device.Device) (*WeightArena, error) {
	a, err := p.p.build(dev)
	if err != nil {
		return nil, err
	}
	return &WeightArena{a}, nil
}

// WeightArena is the model file's mapping as device buffers.
type WeightArena struct{ a *weightArena }

// Bind returns the buffer and byte offset of a payload placed by Build.
func (w *WeightArena) Bind(data []byte) (device.Buffer, int, bool) {
	s, ok := w.a.slot(data)
	if !ok {
		return nil, 0, false
	}
	return w.a.chunks[s.chunk], s.off, true
}

// Bytes is the arena's device memory.
func (w *WeightArena) Bytes() int64 { return w.a.bytes }

// Release frees the buffers (not the mapping).
func (w *WeightArena) Release() { w.a.release() }
