package upscale

import (
	"sync"

	"easel/app/upscalers"
	"easel/kernels/device"
)

// Runners keeps the chosen upscaler loaded between upscales (its weights read once, bound to the
// device); asking for another file or device closes the one held.
type Runners struct {
	// Budget bounds a tile's activations in the runners opened (0: upscale.DefaultBudget); a
	// small one tiles even a small picture.
	Budget int64

	mu   sync.Mutex
	r    *upscalers.Runner
	path string
	dev  device.Device
}

// Open is the runner of e on dev (nil: the CPU), loaded when it is not the one held.
func (rs *Runners) Open(e upscalers.Entry, dev device.Device) (*upscalers.Runner, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.r != nil && rs.path == e.Path && rs.dev == dev {
		return rs.r, nil
	}
	rs.closeLocked()
	r, err := upscalers.Open(e.Path, dev)
	if err != nil {
		return nil, err
	}
	r.Budget = rs.Budget
	rs.r, rs.path, rs.dev = r, e.Path, dev
	return r, nil
}

// Close frees the runner held (the choice changed, or the window closes).
func (rs *Runners) Close() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.closeLocked()
}

func (rs *Runners) closeLocked() {
	if rs.r != nil {
		rs.r.Close()
	}
	rs.r, rs.path, rs.dev = nil, "", nil
}
