package qi21metal

import (
	"fmt"
	"math"
	"runtime/debug"

	"easel/engine/ml/metal"
)

// The denoiser's overflow watch and GPU-error recovery (engine/ml/metal's overflow.go and
// gpuerror.go, applied to a pass):
//
//   - every pass folds the largest stored |value| of each half site of each block into its own
//     slot (qi_amax); after the pass the host reads those few floats (and the velocity a step
//     reads back anyway). The first slot in encoding order that stored ±inf, NaN or came within
//     a factor of two of half's largest value is where the overflow began (later sites only
//     carry it on); that site's guard is widened by metal.WidenBits and the pass runs again,
//     until it passes or the guards stop moving. The widened guards of a pass that passed stay
//     for the denoiser's later programs (the model's). A step cannot widen the qkv guard (its
//     cached prefix V is stored under it); an overflow that cannot be fixed declines, and the
//     Runner moves the prompt to the CPU for the rest of the run. A non-finite velocity is
//     never returned.
//   - a GPU error goes through metal.RunRecovering: after a watchdog stop the pass runs again in
//     one-block command buffers, and if those are stopped too with each large GEMM split into
//     row chunks (4, then 16), each in its own command buffer (a GEMM chunked by output rows
//     computes the same sums: the velocity is bit for bit the same); the level that passed is
//     remembered for the device (metal.DevicePolicy, persisted across processes when the app
//     sets it up). After an out-of-memory the pass runs once more after Options.ReleaseCaches
//     and, for a step, a re-plan of its program's activation buffers for the target's rows
//     (replan.go); what remains declines with a sentence.
//   - every recovery is recorded (Retries) and told to Options.OnRetry, which the pipeline's
//     placement turns into a notice.

const siteQKV = 1

// defaultBlocksPerBuffer is the command-buffer length: two blocks, short enough for the watchdog
// at the published sizes (docs/ARCHITECTURE.md §3).
const defaultBlocksPerBuffer = 2

// maxLevel is the shortest command-buffer level (metal.ProgramDenoiser's levels: 1 one block per
// buffer, 2 and 3 the large GEMMs in metal.GemmChunks row chunks).
const maxLevel = 3

// level is the command-buffer level remembered for this device (0: the default).
func (d *Denoiser) level() int { return d.devicePolicy().Level(d.dev.Name(), metal.ProgramDenoiser) }

// devicePolicy is Options.Policy, or the process's (also for denoisers made without New, e.g.
// the block benchmark's).
func (d *Denoiser) devicePolicy() *metal.DevicePolicy {
	if d.policy == nil {
		return metal.Policies
	}
	return d.policy
}

// blocksPerBuffer is the blocks per command buffer for this device.
func (d *Denoiser) blocksPerBuffer() int {
	if d.level() > 0 {
		return 1
	}
	return defaultBlocksPerBuffer
}

// gemmChunks is the row chunks of each large GEMM for this device (1: whole).
func (d *Denoiser) gemmChunks() int { return metal.GemmChunks(d.level()) }

// Guards are the half guards the next prefill runs under: the knobs', widened by any overflow
// this denoiser recovered from.
func (d *Denoiser) Guards() metal.Guards {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.knobs.Guards
}

// Retries are the GPU-error recoveries and guard widenings so far (for notices and diagnostics).
func (d *Denoiser) Retries() []metal.Retry {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]metal.Retry(nil), d.retries...)
}

func (d *Denoiser) noteRetries(r ...metal.Retry) {
	if len(r) == 0 {
		return
	}
	d.mu.Lock()
	d.retries = append(d.retries, r...)
	d.mu.Unlock()
	if d.onRetry != nil {
		for _, x := range r {
			d.onRetry(x)
		}
	}
	if d.logf != nil {
		for _, x := range r {
			outcome := "it passed"
			if !x.OK {
				outcome = "it failed again"
			}
			if x.Kind == "overflow" {
				d.logf("metal: the %s on %s: %s", x.Stage, d.dev.Name(), x.What)
				continue
			}
			d.logf("metal: the %s on %s hit a GPU %s; %s, and %s", x.Stage, d.dev.Name(), x.Kind, x.What, outcome)
		}
	}
}

// recovery is what a pass can do after a GPU error; replan, when not nil, is the pass's own
// out-of-memory re-plan (replan.go), run after the caches are released.
func (d *Denoiser) recovery(replan func() string) metal.Recovery {
	return metal.Recovery{
		Shorten: func() (string, bool) {
			l := d.level()
			if l >= maxLevel {
				return "", false
			}
			d.devicePolicy().Remember(d.dev.Name(), metal.ProgramDenoiser, l+1)
			if l+1 == 1 {
				return "one transformer block per command buffer", true
			}
			return fmt.Sprintf("one transformer block per command buffer and each large matrix product split into %d command buffers", metal.GemmChunks(l+1)), true
		},
		Release: func() string {
			d.releaseCaches()
			if replan != nil {
				if did := replan(); did != "" {
					return "released cached buffers, " + did + ","
				}
			}
			return ""
		},
	}
}

// runWatched runs pass (one prefill or step under the guards it is given; it returns the watch's
// slots and, for a step, the velocity) with the recovery above (replan: the pass's out-of-memory
// re-plan, or nil). g holds the guards and receives the widened ones; fixed are the sites this
// pass may not widen.
func (d *Denoiser) runWatched(what string, g *metal.Guards, fixed []int, replan func() string, pass func(metal.Guards) (watch, out []float32, err error)) error {
	stage := "denoiser " + what
	// the guards widened so far: told once the pass ends, OK when it passed, and kept for the
	// model's later programs only then (a guard widened in vain would cost precision)
	var widened []metal.Retry
	done := func(err error) error {
		for i := range widened {
			widened[i].OK = err == nil
		}
		if err == nil && len(widened) > 0 {
			d.mu.Lock()
			for site := range amaxSites {
				if p := d.knobs.Guards.Site(site); *p < *g.Site(site) {
					*p = *g.Site(site)
				}
			}
			d.mu.Unlock()
		}
		d.noteRetries(widened...)
		return err
	}
	for round := 0; ; round++ {
		var watch, out []float32
		retries, err := metal.RunRecovering(stage, func() error {
			var err error
			watch, out, err = pass(*g)
			return err
		}, d.recovery(replan))
		d.noteRetries(retries...)
		if err != nil {
			return done(err)
		}
		site, overflowed := firstOverflow(watch)
		finite := metal.Finite(out)
		if !overflowed && finite {
			return done(nil)
		}
		if !overflowed {
			return done(metal.Decline("the denoiser's %s on %s gave a velocity that is not finite although no half site overflowed (guards %s) — please report it with `easel diagnose`", what, d.dev.Name(), *g))
		}
		name := amaxSites[site%len(amaxSites)]
		wider, moved := g.Widen([]int{site % len(amaxSites)})
		if !moved || containsInt(fixed, site%len(amaxSites)) || round >= 2*len(amaxSites) {
			why := "its guard is already the widest"
			if containsInt(fixed, site%len(amaxSites)) {
				why = "a step cannot widen it under the prompt's cached keys and values"
			}
			return done(metal.Decline("half precision overflowed at the %s site of block %d in the denoiser's %s (guards %s) and %s, so no black or NaN image is saved", name, site/len(amaxSites), what, *g, why))
		}
		widened = append(widened, metal.Retry{Stage: stage, Kind: "overflow", What: fmt.Sprintf("half precision overflowed at the %s site of block %d; ran again with that guard widened to %d bits", name, site/len(amaxSites), *wider.Site(site % len(amaxSites)))})
		*g = wider
	}
}

// firstOverflow is the first slot (block·sites + site) in encoding order that overflowed. Slots
// are in encoding order except that a block's attn-in comes before its other sites, which is
// also the order they run in.
func firstOverflow(watch []float32) (int, bool) {
	for i, v := range watch {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) || f >= metal.OverflowLimit {
			return i, true
		}
	}
	return 0, false
}

// foldSites is the largest stored value per site over the blocks (EASEL_METAL_AMAX's report).
func foldSites(watch []float32) []float32 {
	out := make([]float32, len(amaxSites))
	for i, v := range watch {
		if s := i % len(amaxSites); v > out[s] || math.IsNaN(float64(v)) {
			out[s] = v
		}
	}
	return out
}

func containsInt(list []int, x int) bool {
	for _, v := range list {
		if v == x {
			return true
		}
	}
	return false
}

// releaseCaches is the out-of-memory recovery's release: the caller's (Options.ReleaseCaches:
// other networks' pooled buffers), then the Go heap's free pages.
func (d *Denoiser) releaseCaches() {
	if d.onOOM != nil {
		d.onOOM()
	}
	debug.FreeOSMemory()
}
