package qi21metal

import (
	"easel/engine/ml/metal"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"easel/engine/ml"
	"easel/engine/qi21"
	"easel/kernels/device"
)

// Denoiser is a qi21 transformer on a Metal device: Prefill, Step and Release with the contract
// of qi21.Model's, computed by the fused kernels. The model (loaded on its host backend) supplies
// the geometry, the weight payloads (read in place from mapping) and the host work.
type Denoiser struct {
	dev   device.Device
	model *qi21.Model
	cfg   qi21.Config
	knobs metal.Knobs
	pipes *pipelines

	// weights is the arena's plan over the mapping; arena its no-copy buffers while held (nil
	// between runs: acquireWeights makes it, ReleaseWeights drops it)
	weights         *metal.WeightArenaPlan
	arena           *metal.WeightArena
	aux             device.Buffer // aux floats: q8 side planes, norms, img_in, proj_out
	imgIn, projOut  int           // byte offsets in aux
	blocks          []blockWeights
	maxBuffer, wset int64
	lora            *deviceLoRA // the model's LoRA terms on the device (lora.go), or nil

	mu       sync.Mutex
	closed   bool
	resident int64 // device memory held: the arena while held, aux, LoRAs, live programs
	live     int
	last     PassStats
	// deviceTime is the device time of every pass so far
	deviceTime time.Duration
	timings    ml.Timings
	gpu        ml.GPUTimings // GPU time per class of every pass, always (recorder)
	logf       func(format string, args ...any)
	onOOM      func()              // Options.ReleaseCaches
	onRetry    func(metal.Retry)   // Options.OnRetry
	policy     *metal.DevicePolicy // Options.Policy, or metal.Policies
	retries    []metal.Retry       // recoveries so far (watch.go)
	// tune is Options.Tune; geometry the class whose choice runs (firstuse.go)
	tune     Tuner
	tuneReps int
	geometry string
}

// Options configure New.
type Options struct {
	// Knobs are the guards and diagnostics; the zero value means metal.KnobsFromEnv.
	Knobs *metal.Knobs
	// ReleaseCaches, when set, frees cached device memory elsewhere (another network's pooled
	// buffers) before the one retry after a GPU out-of-memory error.
	ReleaseCaches func()
	// Logf, when set, receives one line per pass in profiling or amax mode, and each recovery.
	Logf func(format string, args ...any)
	// OnRetry, when set, is told each recovery as it happens (a guard widened after an
	// overflow, a pass run again after a watchdog stop or an out-of-memory; OK says whether that
	// run passed): the pipeline's placement turns them into notices.
	OnRetry func(metal.Retry)
	// Policy is where the command-buffer level the watchdog let pass is remembered per device;
	// nil means metal.Policies (the process's, persisted when the app set that up).
	Policy *metal.DevicePolicy
	// Variants, when set, is the autotuner's choice to run (metal.TuneCache, DeclareVariants);
	// EASEL_METAL_VARIANT_GEMM and EASEL_METAL_VARIANT_ATTN, when set, override it.
	Variants *metal.TuneReport
	// Tune, when set, is the first-use autotuner (firstuse.go): before a run's first prefill the
	// denoiser runs the variants it gives for the run's geometry class instead of Variants'.
	Tune Tuner
	// TuneReps is how many runs each variant's tuning time is the median of (0: 3).
	TuneReps int
}

// New prepares m for dev: checks the geometry, compiles the kernels, checks the fragment layout,
// plans the weight arena over mapping (the model file's whole mapping, e.g. (*cmf.File).Bytes())
// and checks it against the device's limits before creating it. A *metal.Declined error means the CPU
// path should run the model. The new denoiser holds its arena; ReleaseWeights drops it between
// runs and the next Prefill makes it again.
func New(dev device.Device, m *qi21.Model, mapping []byte, opts Options) (*Denoiser, error) {
	if dev == nil || m == nil {
		return nil, fmt.Errorf("metal: New needs a device and a model")
	}
	c := m.Config
	if err := checkGeometry(c); err != nil {
		return nil, err
	}
	d := &Denoiser{dev: dev, model: m, cfg: c}
	if opts.Knobs != nil {
		d.knobs = *opts.Knobs
	} else {
		k, err := metal.KnobsFromEnv()
		if err != nil {
			return nil, err
		}
		d.knobs = k
	}
	d.maxBuffer, d.wset = metal.DeviceLimits(dev)

	aux := &auxBuilder{}
	blocks, err := describeBlocks(m, aux)
	if err != nil {
		return nil, err
	}
	imgIn, err := denseWithBias("dit.img_in.weight", m.Weights.ImgIn)
	if err != nil {
		return nil, err
	}
	projOut, err := denseWithBias("dit.proj_out.weight", m.Weights.ProjOut)
	if err != nil {
		return nil, err
	}
	d.imgIn, d.projOut = aux.add(imgIn), aux.add(projOut)

	if err := d.place(mapping, blocks, aux); err != nil {
		return nil, err
	}
	d.logf, d.onOOM, d.onRetry, d.policy = opts.Logf, opts.ReleaseCaches, opts.OnRetry, opts.Policy
	d.tune, d.tuneReps = opts.Tune, opts.TuneReps
	if d.tuneReps < 1 {
		d.tuneReps = defaultTuneReps
	}
	if err := d.useChosenVariants(opts.Variants, os.Getenv); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// useChosenVariants runs the tuned variants, each class overridden by its forcing variable. A
// tuned choice that cannot run here leaves the baseline (with a log line); a forced one is an
// error naming the variable.
func (d *Denoiser) useChosenVariants(r *metal.TuneReport, getenv func(string) string) error {
	gemm, attn := r.Chosen(ClassGemm), r.Chosen(ClassAttn)
	forcedG := strings.TrimSpace(getenv(metal.ForceEnv(ClassGemm)))
	forcedA := strings.TrimSpace(getenv(metal.ForceEnv(ClassAttn)))
	if forcedG != "" {
		gemm = forcedG
	}
	if forcedA != "" {
		attn = forcedA
	}
	err := d.UseVariants(gemm, attn)
	switch {
	case err == nil:
		return nil
	case forcedG != "" || forcedA != "":
		return fmt.Errorf("%w (%s / %s: unset them, or name a variant docs/METAL.md §7 lists)", err, metal.ForceEnv(ClassGemm), metal.ForceEnv(ClassAttn))
	default:
		if d.logf != nil {
			d.logf("qi21metal: the tuned kernel variants cannot run here (%v); the baseline kernels run", err)
		}
		return d.UseVariants("base", "base")
	}
}

// place plans the weight arena of blocks over mapping and the aux buffer, checks them against the
// device's limits, builds the pipelines and creates the buffers: the part of New after the weights
// are described.
func (d *Denoiser) place(mapping []byte, blocks []blockWeights, aux *auxBuilder) error {
	dev := d.dev
	var tensors [][]byte
	var names []string
	for l := range blocks {
		for i := range blocks[l].w {
			tensors = append(tensors, blocks[l].w[i].data)
			names = append(names, blocks[l].w[i].name)
		}
	}
	ap, err := metal.PlanWeightArena(mapping, tensors, names, d.maxBuffer)
	if err != nil {
		return err
	}
	auxBytes := int64(4 * max(len(aux.f), 4))
	plan := memoryPlan{{"the auxiliary weights", auxBytes}}
	for i, n := range ap.Chunks() {
		plan = append(plan, plannedBuffer{fmt.Sprintf("weight chunk %d", i), n})
	}
	if err := plan.fit("the model", 0, d.maxBuffer, d.wset); err != nil {
		return err
	}

	if d.pipes, err = buildPipelines(dev); err != nil {
		return err
	}
	if err := checkFragmentLayout(dev, d.pipes); err != nil {
		return err
	}
	if d.aux, err = dev.NewBuffer(int(auxBytes)); err != nil {
		return fmt.Errorf("metal: auxiliary weight buffer (%s): %w", metal.FormatBytes(auxBytes), err)
	}
	copy(device.View[float32](d.aux), aux.f)
	d.weights, d.blocks, d.resident = ap, blocks, auxBytes
	if err := d.acquireWeights(); err != nil {
		d.aux.Release()
		return err
	}
	return nil
}

// acquireWeights makes the weight arena when it is not held (no-copy buffers over the mapping:
// nothing is copied) and binds every projection to its chunk and offset. Called under d.mu, or
// before the denoiser is shared.
func (d *Denoiser) acquireWeights() error {
	if d.arena != nil {
		return nil
	}
	a, err := d.weights.Build(d.dev)
	if err != nil {
		return err
	}
	for l := range d.blocks {
		for i := range d.blocks[l].w {
			w := &d.blocks[l].w[i]
			buf, off, ok := a.Bind(w.data)
			if !ok {
				a.Release()
				return fmt.Errorf("metal: %s is not in the weight arena's plan (a bug)", w.name)
			}
			w.buf, w.off = buf, off
		}
	}
	d.arena = a
	d.resident += a.Bytes()
	return nil
}

// ReleaseWeights drops the weight arena (the no-copy buffers over the model file's mapping; the
// mapping itself is the caller's) so the device holds only the small auxiliary weights and the
// LoRAs until the next Prefill makes it again. It keeps the arena while a program is live (its
// steps read the weights) and reports whether the arena is released.
func (d *Denoiser) ReleaseWeights() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.live > 0 {
		return false
	}
	d.dropWeights()
	return true
}

// dropWeights releases the arena, if held, and unbinds the projections. Called under d.mu.
func (d *Denoiser) dropWeights() {
	if d.arena == nil {
		return
	}
	d.resident -= d.arena.Bytes()
	d.arena.Release()
	d.arena = nil
	for l := range d.blocks {
		for i := range d.blocks[l].w {
			d.blocks[l].w[i].buf, d.blocks[l].w[i].off = nil, 0
		}
	}
}

// checkGeometry declines the geometries the kernels do not handle.
func checkGeometry(c qi21.Config) error {
	D, F := c.Hidden(), c.MLPHidden()
	switch {
	case c.HeadDim != 128:
		return metal.Decline("the transformer has %d-channel heads; the kernels need 128", c.HeadDim)
	case D%64 != 0 || D > 4096:
		return metal.Decline("the transformer is %d wide; the kernels need a multiple of 64 up to 4096", D)
	case F%64 != 0:
		return metal.Decline("the feed-forward layer is %d wide; the kernels need a multiple of 64", F)
	case c.InChannels != 64 || c.OutChannels != 64:
		return metal.Decline("the transformer has %d latent channels in and %d out; the kernels need 64", c.InChannels, c.OutChannels)
	}
	half := 0
	for _, a := range c.AxesDims {
		half += a / 2
	}
	if half != c.HeadDim/2 {
		return metal.Decline("the RoPE axes %v cover %d angles; the kernels need %d", c.AxesDims, half, c.HeadDim/2)
	}
	return nil
}

// Timings is the GPU time per op class, summed over passes run in profiling mode.
func (d *Denoiser) Timings() *ml.Timings { return &d.timings }

// GPUClasses is the GPU time per op class of every pass so far, in any mode, and how it was
// measured (sampled at encoder boundaries, an estimated split, or profiling mode).
func (d *Denoiser) GPUClasses() ml.GPUClasses { return d.gpu.Snapshot() }

// Close releases the weights. Programs must be released first.
func (d *Denoiser) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.closed = true
	d.lora.release()
	d.lora = nil
	d.dropWeights()
	d.aux.Release()
	d.resident = 0
}

// LastPass is the cost of the most recent prefill or step.
func (d *Denoiser) LastPass() PassStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last
}

// WorkingSet is the memory the denoiser may use on its device: the device's recommended working
// set, or 0 when the device reports none.
func (d *Denoiser) WorkingSet() int64 {
	if d.wset >= metal.Unlimited {
		return 0
	}
	return d.wset
}

// DeviceName is the device's name, for messages.
func (d *Denoiser) DeviceName() string { return d.dev.Name() }

// KVElementBytes is the size of one cached key or value on the device: half precision.
func (d *Denoiser) KVElementBytes() int { return 2 }

// Resident is the device memory the denoiser holds now: the weight arena while it is held (from
// a Prefill until ReleaseWeights), the auxiliary weights, the LoRAs and the live programs.
func (d *Denoiser) Resident() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.resident
}

// ActivationBytes is the device memory a program of prefix and target rows holds besides its
// prefix K/V: its activation buffers, the target's inputs and outputs, and the prefill's
// temporaries (each program owns its own; two live under CFG).
func (d *Denoiser) ActivationBytes(prefix, target int) int64 {
	plan := programPlan(d.cfg, prefix, target)
	return plan.total() - plan[bufKV].bytes
}

// DeviceTime is the device time of every prefill and step so far (the command buffers' GPU time;
// on the emulator, its own measure of the kernels' run time).
func (d *Denoiser) DeviceTime() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.deviceTime
}
