package metalops

import (
	"errors"
	"strings"
	"time"

	"easel/engine/ml"
	"easel/engine/ml/metal"
	"easel/engine/quant"
	"easel/kernels/device"
)

// Network is a model bound to a Backend that is resident on the device only while one of its
// calls runs. Its weights that lie in the model file's mapping are planned once as a weight arena
// (no-copy buffers over the mapping, engine/ml/metal's); each call builds the arena, runs with the
// activation budget its plan allows, then frees the activation buffers, the converted weights and
// the arena. Only what the model uploaded while it loaded (gains, biases) stays between calls.
// Before each call the weights, the call's planned activations and what other networks hold are
// checked against the device's recommended working set; work that does not fit is a
// *metal.Declined sentence. The device text encoder and the device VAE are Networks.
type Network struct {
	b          *Backend
	name       string                 // "the VAE", "the text encoder": for the decline sentences
	retries    []metal.Retry          // GPU-error recoveries (Run)
	onRetry    func(metal.Retry)      // SetOnRetry
	arenaPlan  *metal.WeightArenaPlan // nil when no weight lies in the mapping
	arenaBytes int64
	vectors    int64 // what the model uploaded while it loaded
	maxBuffer  int64
	workingSet int64
	others     func() int64    // device memory other networks hold (the denoiser's), or nil
	bound      []*quant.Tensor // every tensor the model bound through Source
}

// NewNetwork makes the backend a network named name ("the VAE") loads on, profiling per op class
// when the environment asks for it (EASEL_METAL_PROF=1).
func NewNetwork(dev device.Device, name string) (*Network, error) {
	if dev == nil {
		return nil, errors.New("metalops: a network needs a device")
	}
	knobs, err := metal.KnobsFromEnv()
	if err != nil {
		return nil, err
	}
	b, err := New(dev)
	if err != nil {
		return nil, err
	}
	b.SetProfile(knobs.Profile)
	n := &Network{b: b, name: name}
	n.maxBuffer, n.workingSet = metal.DeviceLimits(dev)
	return n, nil
}

// Backend is the backend to load the model on.
func (n *Network) Backend() *Backend { return n.b }

// Source wraps the model file so that Place knows every tensor the model binds while it loads.
func (n *Network) Source(src quant.Source) quant.Source { return &bindingSource{src, n} }

// bindingSource records every tensor a model binds.
type bindingSource struct {
	quant.Source
	n *Network
}

func (s *bindingSource) Tensor(name string) (*quant.Tensor, error) {
	t, err := s.Source.Tensor(name)
	if err == nil && t != nil {
		s.n.bound = append(s.n.bound, t)
	}
	return t, err
}

// Place plans the weight arena over the bound tensors that lie inside mapping (the model file's
// whole mapping) and that readInPlace accepts, takes what the backend holds now as the model's
// resident vectors, and declines when those and the arena alone exceed the working set.
func (n *Network) Place(mapping []byte, readInPlace func(*quant.Tensor) bool) error {
	var tensors [][]byte
	var names []string
	for _, t := range n.bound {
		if readInPlace(t) && metal.InMapping(mapping, t.Data) {
			tensors = append(tensors, t.Data)
			names = append(names, t.Name)
		}
	}
	n.bound = nil
	if len(tensors) > 0 {
		var err error
		if n.arenaPlan, err = metal.PlanWeightArena(mapping, tensors, names, n.maxBuffer); err != nil {
			return err
		}
		for _, c := range n.arenaPlan.Chunks() {
			n.arenaBytes += c
		}
	}
	n.vectors = n.b.LiveBytes()
	if need := n.vectors + n.arenaBytes; need > n.workingSet {
		return metal.Decline("%s's weights need %s of GPU memory, more than this GPU's recommended working set (%s)", n.name, metal.FormatBytes(need), metal.FormatBytes(n.workingSet))
	}
	return nil
}

// SetOtherResident tells the network how much device memory other networks hold when it runs (the
// Metal denoiser's), so each call's check counts it.
func (n *Network) SetOtherResident(f func() int64) { n.others = f }

// DeviceName names the device.
func (n *Network) DeviceName() string { return n.b.Device().Name() }

// Timings is the GPU time per op class in profiling mode (EASEL_METAL_PROF=1), else empty.
func (n *Network) Timings() *ml.Timings { return n.b.Timings() }

// GPUClasses is the GPU time per op class of every call so far, in any mode, and how it was
// measured.
func (n *Network) GPUClasses() ml.GPUClasses { return n.b.GPUClasses() }

// DeviceTime is the GPU time of every call so far.
func (n *Network) DeviceTime() time.Duration { return n.b.DeviceTime() }

// ResidentBytes is the device memory the network holds between calls: its gains and biases.
func (n *Network) ResidentBytes() int64 { return n.vectors }

// WeightBytes is the device memory of the weight arena while a call runs.
func (n *Network) WeightBytes() int64 { return n.arenaBytes }

// Close frees the device memory (the mapping stays the caller's).
func (n *Network) Close() { n.b.Close() }

// fit declines work (what: "decoding 8×4 latents in one piece") whose planned activations need do
// not fit beside the weights and what other networks hold.
func (n *Network) fit(what string, need int64) error {
	var others int64
	if n.others != nil {
		others = n.others()
	}
	weights := n.vectors + n.arenaBytes
	if total := weights + need + others; total > n.workingSet {
		held := ""
		if others > 0 {
			held = ", " + metal.FormatBytes(others) + " held by the denoiser"
		}
		return metal.Decline("%s needs %s of GPU memory (%s of weights, %s of activations%s), more than this GPU's recommended working set (%s)",
			what, metal.FormatBytes(total), metal.FormatBytes(weights), metal.FormatBytes(need), held, metal.FormatBytes(n.workingSet))
	}
	return nil
}

// Run checks that work with planned activations need fits, makes the weight arena, runs call with
// that activation budget, then frees the activation buffers, the converted weights and the arena.
// A decline met on the way (a buffer past the largest one) is returned as the *metal.Declined it
// is, not as the op's error that wraps it as text.
func (n *Network) Run(what string, need int64, call func() error) error {
	if err := n.fit(what, need); err != nil {
		return err
	}
	if n.arenaPlan != nil {
		arena, err := n.arenaPlan.Build(n.b.Device())
		if err != nil {
			return err
		}
		n.b.SetArena(arena)
		defer func() {
			n.b.SetArena(nil)
			arena.Release()
		}()
	}
	once := func() error {
		n.b.SetBudget(n.vectors + need)
		n.b.TakeDecline()
		err := call()
		if serr := n.b.Release(); serr != nil && err == nil {
			err = serr
		}
		if d := n.b.TakeDecline(); err != nil && d != nil {
			return d
		}
		return err
	}
	// GPU errors by kind (metal.RunRecovering): after a watchdog stop the call runs again in
	// shorter command buffers, after an out-of-memory once more with the pool released (Release
	// above already emptied it); what remains is a decline with a sentence, and the CPU runs it.
	retries, err := metal.RunRecovering(strings.TrimPrefix(n.name, "the "), once, metal.Recovery{Shorten: n.b.shorten})
	n.retries = append(n.retries, retries...)
	if n.onRetry != nil {
		for _, r := range retries {
			n.onRetry(r)
		}
	}
	return err
}

// SetOnRetry makes f hear each GPU-error recovery of the network's calls as it happens (OK says
// whether the run after it passed): the pipeline's placement turns them into notices.
func (n *Network) SetOnRetry(f func(metal.Retry)) { n.onRetry = f }

// Retries are the GPU-error recoveries of this network's calls so far.
func (n *Network) Retries() []metal.Retry { return append([]metal.Retry(nil), n.retries...) }
