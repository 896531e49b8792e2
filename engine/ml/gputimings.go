package ml

import (
	"strings"
	"sync"
	"time"
)

// TimeSource is how a device's GPU time per class was measured.
type TimeSource int

// The ways a command buffer's GPU time is split over op classes (docs/METAL.md, "GPU time per
// kernel class").
const (
	// TimeSampled: timestamps at the boundaries of compute passes, a pass per run of one class.
	TimeSampled TimeSource = iota
	// TimeEstimated: the buffer's GPU time apportioned over its dispatches by a cost model (the
	// threads each launches), where the device cannot sample timestamps.
	TimeEstimated
	// TimeProfiled: profiling mode (EASEL_METAL_PROF=1), a command buffer per run of one class.
	TimeProfiled
	numTimeSources
)

var timeSourceNames = [numTimeSources]string{"sampled", "estimated split", "profiling"}

// String is the source as reports label it.
func (s TimeSource) String() string {
	if s >= 0 && s < numTimeSources {
		return timeSourceNames[s]
	}
	return "unknown"
}

// GPUClasses is GPU time per op class and how many command buffers each source measured.
type GPUClasses struct {
	Time    [NumClasses]time.Duration
	Buffers [numTimeSources]int
}

// Total is the time summed over the classes.
func (g GPUClasses) Total() time.Duration {
	var t time.Duration
	for _, d := range g.Time {
		t += d
	}
	return t
}

// Source names how the times were measured: "sampled", "estimated split", "profiling", or
// several joined with " + " when command buffers were measured in different ways ("" for none).
func (g GPUClasses) Source() string {
	var parts []string
	for s, n := range g.Buffers {
		if n > 0 {
			parts = append(parts, TimeSource(s).String())
		}
	}
	return strings.Join(parts, " + ")
}

// Add records one command buffer's GPU time per class, measured by src.
func (g *GPUClasses) Add(by [NumClasses]time.Duration, src TimeSource) {
	if src < 0 || src >= numTimeSources {
		return
	}
	for c, d := range by {
		g.Time[c] += d
	}
	g.Buffers[src]++
}

// Plus is g and o added.
func (g GPUClasses) Plus(o GPUClasses) GPUClasses {
	for c := range g.Time {
		g.Time[c] += o.Time[c]
	}
	for s := range g.Buffers {
		g.Buffers[s] += o.Buffers[s]
	}
	return g
}

// Minus is g less an earlier snapshot o of the same accumulator.
func (g GPUClasses) Minus(o GPUClasses) GPUClasses {
	for c := range g.Time {
		g.Time[c] -= o.Time[c]
	}
	for s := range g.Buffers {
		g.Buffers[s] -= o.Buffers[s]
	}
	return g
}

// GPUTimings accumulates a device's GPU time per class, always (not only in profiling mode). It
// is safe for concurrent use; the zero value is ready.
type GPUTimings struct {
	mu sync.Mutex
	g  GPUClasses
}

// Add records one command buffer's GPU time per class, measured by src.
func (t *GPUTimings) Add(by [NumClasses]time.Duration, src TimeSource) {
	t.mu.Lock()
	t.g.Add(by, src)
	t.mu.Unlock()
}

// AddClasses records g's buffers.
func (t *GPUTimings) AddClasses(g GPUClasses) {
	t.mu.Lock()
	t.g = t.g.Plus(g)
	t.mu.Unlock()
}

// Snapshot is the totals so far.
func (t *GPUTimings) Snapshot() GPUClasses {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.g
}
